package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The foundation slice end to end: client -> router -> mock GPU workers over loopback HTTP. */
class RouterProxyTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestFleet fleet;
    private static Http http;

    @BeforeAll
    static void startFleet() throws Exception {
        fleet = TestFleet.start(2, List.of("--decode-ms-per-step", "25", "--prefill-ms-per-1k", "5"),
                List.of("--health-check-interval-secs", "0.2"));
        http = new Http();
        // the router learns the model id from /server_info shortly after start
        await().atMost(Duration.ofSeconds(5)).until(() -> http.get(fleet.url("/v1/models")).getContentAsString().contains("mock-model"));
    }

    @AfterAll
    static void stopFleet() throws Exception {
        http.close();
        fleet.close();
    }

    private static String chat(boolean stream, int maxTokens) {
        return "{\"model\":\"mock-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],"
                + "\"max_tokens\":" + maxTokens + ",\"stream\":" + stream
                + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    }

    @Test
    void nonStreamingChat_isRelayedWholeWithUsage() throws Exception {
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), chat(false, 5));
        assertThat(response.getStatus()).isEqualTo(200);
        JsonNode body = JSON.readTree(response.getContentAsString());
        assertThat(body.path("object").asText()).isEqualTo("chat.completion");
        assertThat(body.path("usage").path("completion_tokens").asInt()).isEqualTo(5);
        assertThat(body.path("usage").path("prompt_tokens").asInt()).isPositive();
        assertThat(response.getHeaders().get("x-kvroute-worker")).startsWith("http://127.0.0.1:");
        // relayed byte for byte, so sized like the worker's answer rather than chunked
        assertThat(response.getHeaders().get("Content-Length")).isEqualTo(String.valueOf(response.getContent().length));
        assertThat(response.getHeaders().get("Transfer-Encoding")).isNull();
    }

    @Test
    void streamingChat_chunksArriveIncrementallyNotAtTheEnd() throws Exception {
        Http.Reply reply = http.stream(fleet.url("/v1/chat/completions"), chat(true, 20)).get(30, TimeUnit.SECONDS);
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get("content-type")).startsWith("text/event-stream");
        assertThat(reply.body()).contains("chat.completion.chunk").endsWith("data: [DONE]\n\n");
        long tokens = reply.body().lines().filter(l -> l.contains("\"content\":\" ")).count();
        assertThat(tokens).isEqualTo(20);
        // 20 tokens at 25 ms per decode step: the first chunk must arrive long before the last.
        long firstMs = reply.chunkNanos().get(0) / 1_000_000;
        long lastMs = reply.chunkNanos().get(reply.chunkNanos().size() - 1) / 1_000_000;
        assertThat(reply.chunkNanos().size()).isGreaterThanOrEqualTo(10);
        assertThat(lastMs - firstMs).as("first chunk at %d ms, last at %d ms", firstMs, lastMs).isGreaterThanOrEqualTo(300);
    }

    @Test
    void completions_streamingAndNot() throws Exception {
        String body = "{\"prompt\":\"once upon a time\",\"max_tokens\":4}";
        ContentResponse whole = http.postJson(fleet.url("/v1/completions"), body);
        assertThat(whole.getStatus()).isEqualTo(200);
        assertThat(JSON.readTree(whole.getContentAsString()).path("choices").get(0).path("text").asText()).isNotBlank();
        Http.Reply streamed = http.stream(fleet.url("/v1/completions"),
                "{\"prompt\":[\"a\",\"b\"],\"max_tokens\":4,\"stream\":true}").get(30, TimeUnit.SECONDS);
        assertThat(streamed.status()).isEqualTo(200);
        assertThat(streamed.body()).contains("text_completion").contains("[DONE]");
    }

    @Test
    void generate_acceptsTextOrInputIds() throws Exception {
        ContentResponse text = http.postJson(fleet.url("/generate"),
                "{\"text\":\"hello\",\"sampling_params\":{\"max_new_tokens\":3}}");
        assertThat(text.getStatus()).isEqualTo(200);
        assertThat(JSON.readTree(text.getContentAsString()).path("meta_info").path("completion_tokens").asInt()).isEqualTo(3);
        Http.Reply ids = http.stream(fleet.url("/generate"),
                "{\"input_ids\":[1,2,3,4],\"sampling_params\":{\"max_new_tokens\":3},\"stream\":true}").get(30, TimeUnit.SECONDS);
        assertThat(ids.status()).isEqualTo(200);
        assertThat(ids.body()).contains("\"meta_info\"").contains("[DONE]");
    }

    @Test
    void clientDisconnect_abortsTheUpstreamRequest() throws Exception {
        long abortedBefore = totalAborted();
        org.eclipse.jetty.client.Request request = http.client.newRequest(fleet.url("/v1/chat/completions"))
                .method("POST").body(new org.eclipse.jetty.client.StringRequestContent("application/json", chat(true, 400)));
        java.util.concurrent.CountDownLatch firstChunk = new java.util.concurrent.CountDownLatch(1);
        request.onResponseContent((r, b) -> firstChunk.countDown());
        request.send(result -> { });
        assertThat(firstChunk.await(10, TimeUnit.SECONDS)).isTrue();
        request.abort(new Exception("client went away"));
        await().atMost(Duration.ofSeconds(5)).until(() -> totalAborted() > abortedBefore);
        // and the router's in-flight count for every worker returns to zero
        await().atMost(Duration.ofSeconds(5)).until(() -> fleet.workers.stream()
                .allMatch(w -> fleet.router.router().inFlight().get(io.kvroute.router.worker.Worker.idFor(w.baseUrl())) == 0));
    }

    private static long totalAborted() {
        return fleet.workers.stream().mapToLong(w -> w.handler().abortedRequests()).sum();
    }

    @Test
    void badInput_getsOpenAiStyle4xx() throws Exception {
        assertError(http.postJson(fleet.url("/v1/chat/completions"), "{\"messages\": [ "), 400, "invalid JSON");
        assertError(http.postJson(fleet.url("/v1/chat/completions"), "[1,2,3]"), 400, "JSON object");
        assertError(http.postJson(fleet.url("/v1/chat/completions"), "{\"model\":\"mock-model\"}"), 400, "messages");
        assertError(http.postJson(fleet.url("/v1/chat/completions"),
                "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"yes\"}"), 400, "stream");
        assertError(http.postJson(fleet.url("/v1/chat/completions"),
                "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":-3}"), 400, "max_tokens");
        assertError(http.postJson(fleet.url("/generate"), "{\"sampling_params\":{}}"), 400, "text");
        assertError(http.post(fleet.url("/v1/chat/completions"), "text/plain", "hi".getBytes()), 415, "content type");
        assertError(http.postJson(fleet.url("/v1/chat/completions"),
                "{\"model\":\"gpt-17\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"), 404, "gpt-17");
        assertError(http.get(fleet.url("/v1/chat/completions")), 405, "POST");
        assertError(http.get(fleet.url("/no/such/path")), 404, "no route");
    }

    @Test
    void anErrorAboutAField_namesItsPathInParam_asOpenAiDoes() throws Exception {
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],";
        assertThat(param(http.postJson(fleet.url("/v1/chat/completions"), chat + "\"max_tokens\":-3}"))).isEqualTo("max_tokens");
        assertThat(param(http.postJson(fleet.url("/v1/chat/completions"), chat + "\"stream\":\"yes\"}"))).isEqualTo("stream");
        assertThat(param(http.postJson(fleet.url("/generate"), "{\"sampling_params\":{},\"text\":7}"))).isEqualTo("text");
        JsonNode notAboutAField = JSON.readTree(http.postJson(fleet.url("/v1/chat/completions"), "[1]").getContentAsString());
        assertThat(notAboutAField.path("error").has("param")).isTrue();
        assertThat(notAboutAField.path("error").path("param").isNull()).isTrue();
    }

    private static String param(ContentResponse response) throws Exception {
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(400);
        return JSON.readTree(response.getContentAsString()).path("error").path("param").asText(null);
    }

    @Test
    void oversizedBody_is413() throws Exception {
        try (TestFleet small = TestFleet.start(1, List.of(), List.of("--max-body-bytes", "1000"))) {
            String big = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(5000) + "\"}]}";
            assertError(http.postJson(small.url("/v1/chat/completions"), big), 413, "--max-body-bytes");
        }
    }

    @Test
    void unreachableWorker_is502_andTimeout_is504_andNoWorker_is503() throws Exception {
        try (TestFleet dead = TestFleet.start(1, List.of(), List.of("--health-check-interval-secs", "3600"))) {
            dead.workers.get(0).close(); // still registered and "healthy": the dispatch finds it gone
            assertError(http.postJson(dead.url("/v1/chat/completions"), chat(false, 2)), 502, "unreachable");
        }
        try (TestFleet slow = TestFleet.start(1, List.of("--prefill-ms-per-1k", "100000"),
                List.of("--request-timeout-secs", "0.5"))) {
            assertError(http.postJson(slow.url("/v1/chat/completions"), chat(false, 2)), 504, "did not answer");
        }
        try (TestFleet none = TestFleet.start(1, List.of(), List.of("--health-check-interval-secs", "0.1",
                "--health-failure-threshold", "1"))) {
            none.workers.get(0).close();
            await().atMost(Duration.ofSeconds(5)).until(() -> http.get(none.url("/readyz")).getStatus() == 503);
            assertError(http.postJson(none.url("/v1/chat/completions"), chat(false, 2)), 503, "no usable worker");
        }
    }

    @Test
    void readyz_flipsWhenAllWorkersAreGone_andBack() throws Exception {
        try (TestFleet own = TestFleet.start(2, List.of(), List.of("--health-check-interval-secs", "0.1",
                "--health-failure-threshold", "2", "--health-success-threshold", "1"))) {
            assertThat(http.get(own.url("/readyz")).getStatus()).isEqualTo(200);
            own.workers.get(0).handler().setHealthy(false);
            own.workers.get(1).close();
            await().atMost(Duration.ofSeconds(5)).until(() -> http.get(own.url("/readyz")).getStatus() == 503);
            assertThat(http.get(own.url("/healthz")).getStatus()).isEqualTo(200);
            own.workers.get(0).handler().setHealthy(true);
            await().atMost(Duration.ofSeconds(5)).until(() -> http.get(own.url("/readyz")).getStatus() == 200);
        }
    }

    @Test
    void metrics_scrapeParsesAsPrometheusText() throws Exception {
        http.postJson(fleet.url("/v1/chat/completions"), chat(false, 2));
        ContentResponse scrape = http.get(fleet.url("/metrics"));
        assertThat(scrape.getStatus()).isEqualTo(200);
        List<String> samples = PrometheusText.parse(scrape.getContentAsString());
        assertThat(samples).anyMatch(s -> s.startsWith("kvroute_requests_total{"));
        assertThat(samples).anyMatch(s -> s.startsWith("kvroute_policy_decisions_total{"));
        assertThat(samples).anyMatch(s -> s.startsWith("kvroute_request_duration_seconds_bucket{"));
        assertThat(samples).anyMatch(s -> s.startsWith("kvroute_worker_in_flight{"));
    }

    @Test
    void concurrentStreams_allComplete() throws Exception {
        List<java.util.concurrent.CompletableFuture<Http.Reply>> replies = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            replies.add(http.stream(fleet.url("/v1/chat/completions"), chat(i % 2 == 0, 3)));
        }
        for (var reply : replies) {
            assertThat(reply.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
        }
    }

    private static void assertError(ContentResponse response, int status, String messagePart) throws Exception {
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(status);
        assertThat(response.getHeaders().get("content-type")).startsWith("application/json");
        JsonNode error = JSON.readTree(response.getContentAsString()).path("error");
        assertThat(error.path("message").asText()).containsIgnoringCase(messagePart);
        assertThat(error.path("type").asText()).isNotBlank();
        assertThat(error.path("code").asInt()).isEqualTo(status);
    }
}
