package io.kvroute.mock.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.MockWorkerMain;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;

/**
 * SGLang's {@code /flush_cache} on a real mock worker: GET and POST flush an idle engine (200, SGLang's
 * text), a busy engine refuses (400, same text), other methods get 405, and a flushed prompt is
 * computed again (no cached tokens).
 */
class FlushCacheEndpointTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static ContentResponse send(HttpClient client, HttpMethod method, String url, String body) throws Exception {
        var req = client.newRequest(url).method(method).timeout(30, TimeUnit.SECONDS);
        if (body != null) {
            req.body(new StringRequestContent("application/json", body));
        }
        return req.send();
    }

    private static long cachedTokens(ContentResponse r) throws Exception {
        return JSON.readTree(r.getContentAsString()).path("usage").path("prompt_tokens_details").path("cached_tokens")
                .asLong();
    }

    @Test
    void flush_emptiesAnIdleCache_refusesABusyEngine_andOnlyAcceptsGetAndPost() throws Exception {
        try (MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "20")) {
            HttpClient client = new HttpClient();
            client.start();
            try {
                String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "a long shared prompt ".repeat(40)
                        + "\"}],\"max_tokens\":1}";
                String url = worker.baseUrl();
                assertThat(cachedTokens(send(client, HttpMethod.POST, url + "/v1/chat/completions", chat))).isZero();
                assertThat(cachedTokens(send(client, HttpMethod.POST, url + "/v1/chat/completions", chat))).isPositive();

                ContentResponse flushed = send(client, HttpMethod.POST, url + "/flush_cache", null);
                assertThat(flushed.getStatus()).isEqualTo(200);
                assertThat(flushed.getContentAsString()).startsWith("Cache flushed.\n");
                assertThat(flushed.getMediaType()).isEqualTo("text/plain");
                assertThat(cachedTokens(send(client, HttpMethod.POST, url + "/v1/chat/completions", chat))).isZero();
                assertThat(send(client, HttpMethod.GET, url + "/flush_cache", null).getStatus()).isEqualTo(200);

                // 100 decode steps of 20 ms: the engine is busy for about 2 s
                CompletableFuture<ContentResponse> longRequest = CompletableFuture.supplyAsync(() -> {
                    try {
                        return send(client, HttpMethod.POST, url + "/generate",
                                "{\"text\":\"busy\",\"sampling_params\":{\"max_new_tokens\":100}}");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> worker.engine().stats().numRunningReqs() + worker.engine().stats().numWaitingReqs() > 0);
                ContentResponse refused = send(client, HttpMethod.POST, url + "/flush_cache", null);
                assertThat(refused.getStatus()).isEqualTo(400);
                assertThat(refused.getContentAsString()).isEqualTo(FlushCacheHandler.BODY);
                assertThat(longRequest.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);

                ContentResponse put = send(client, HttpMethod.PUT, url + "/flush_cache", null);
                assertThat(put.getStatus()).isEqualTo(405);
                assertThat(put.getHeaders().get("Allow")).isEqualTo("GET, POST");
                assertThat(JSON.readTree(put.getContentAsString()).path("error").path("code").asInt()).isEqualTo(405);
                assertThat(send(client, HttpMethod.GET, url + "/no_such_route", null).getStatus()).isEqualTo(404);
            } finally {
                client.stop();
            }
        }
    }
}
