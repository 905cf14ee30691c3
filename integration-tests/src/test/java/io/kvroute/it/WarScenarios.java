package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.MockWorkerMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The servlet drop-in's behaviour, the same in every container: {@code target/kvroute.war} deployed
 * by a subclass (embedded Tomcat 11, jetty-home's ee10 deployer) in front of two real mock GPU
 * workers on loopback, driven over real HTTP.
 */
abstract class WarScenarios {

    static final ObjectMapper JSON = new ObjectMapper();
    static final List<MockWorkerMain.MockWorker> WORKERS = new ArrayList<>();
    static Http http;

    /** The router's base URL, including the context path, without a trailing slash. */
    abstract String base();

    /** Starts two mock workers (25 ms per decode step) and writes a router YAML naming them. */
    static Path startWorkersAndWriteConfig(Path dir) throws Exception {
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "25",
                    "--prefill-ms-per-1k", "5");
            WORKERS.add(worker);
            urls.add(worker.baseUrl());
        }
        http = new Http();
        Path yaml = dir.resolve("kvroute.yaml");
        Files.writeString(yaml, "worker-urls: [" + String.join(", ", urls) + "]\npolicy: round_robin\n"
                + "health-check-interval-secs: 0.2\nmax-body-bytes: 100000\n");
        return yaml;
    }

    static Path war() {
        Path war = Path.of(System.getProperty("kvroute.war", "../examples/servlet-war/target/kvroute.war"));
        assertThat(war).as("the WAR must be built first (mvn package in examples/servlet-war)").isRegularFile();
        return war;
    }

    @AfterAll
    static void stopWorkers() throws Exception {
        if (http != null) {
            http.close();
            http = null;
        }
        for (MockWorkerMain.MockWorker worker : WORKERS) {
            worker.close();
        }
        WORKERS.clear();
    }

    void awaitModels() {
        await().atMost(Duration.ofSeconds(30)).until(() -> http.get(base() + "/v1/models").getContentAsString()
                .contains("mock-model"));
    }

    private static String chat(boolean stream, int maxTokens) {
        return "{\"model\":\"mock-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],"
                + "\"max_tokens\":" + maxTokens + ",\"stream\":" + stream
                + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    }

    @Test
    void chat_nonStreaming_isRelayedWhole() throws Exception {
        ContentResponse response = http.postJson(base() + "/v1/chat/completions", chat(false, 5));
        assertThat(response.getStatus()).isEqualTo(200);
        JsonNode body = JSON.readTree(response.getContentAsString());
        assertThat(body.path("object").asText()).isEqualTo("chat.completion");
        assertThat(body.path("usage").path("completion_tokens").asInt()).isEqualTo(5);
        assertThat(response.getHeaders().get("x-kvroute-worker")).startsWith("http://127.0.0.1:");
    }

    @Test
    void chat_sseArrivesSpreadOutChunkByChunk() throws Exception {
        Http.Reply reply = http.stream(base() + "/v1/chat/completions", chat(true, 20)).get(60, TimeUnit.SECONDS);
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get("content-type")).startsWith("text/event-stream");
        assertThat(reply.body()).contains("chat.completion.chunk").endsWith("data: [DONE]\n\n");
        assertThat(reply.body().lines().filter(l -> l.contains("\"content\":\" ")).count()).isEqualTo(20);
        // 20 tokens at 25 ms per decode step: chunks arrive over at least ~300 ms, not in one burst at the end.
        List<Long> arrivals = reply.chunkNanos();
        long spreadMs = (arrivals.get(arrivals.size() - 1) - arrivals.get(0)) / 1_000_000;
        assertThat(arrivals.size()).as("separate arrivals").isGreaterThanOrEqualTo(10);
        assertThat(spreadMs).as("first to last chunk").isGreaterThanOrEqualTo(300);
    }

    @Test
    void completions_streamingAndNot() throws Exception {
        ContentResponse whole = http.postJson(base() + "/v1/completions", "{\"prompt\":\"once upon a time\",\"max_tokens\":4}");
        assertThat(whole.getStatus()).isEqualTo(200);
        assertThat(JSON.readTree(whole.getContentAsString()).path("choices").get(0).path("text").asText()).isNotBlank();
        Http.Reply streamed = http.stream(base() + "/v1/completions",
                "{\"prompt\":\"a b c\",\"max_tokens\":4,\"stream\":true}").get(60, TimeUnit.SECONDS);
        assertThat(streamed.status()).isEqualTo(200);
        assertThat(streamed.body()).contains("text_completion").endsWith("data: [DONE]\n\n");
    }

    @Test
    void generate_textAndStreamedInputIds() throws Exception {
        ContentResponse text = http.postJson(base() + "/generate", "{\"text\":\"hello\",\"sampling_params\":{\"max_new_tokens\":3}}");
        assertThat(text.getStatus()).isEqualTo(200);
        assertThat(JSON.readTree(text.getContentAsString()).path("meta_info").path("completion_tokens").asInt()).isEqualTo(3);
        Http.Reply ids = http.stream(base() + "/generate",
                "{\"input_ids\":[1,2,3,4],\"sampling_params\":{\"max_new_tokens\":3},\"stream\":true}").get(60, TimeUnit.SECONDS);
        assertThat(ids.status()).isEqualTo(200);
        assertThat(ids.body()).contains("\"meta_info\"").contains("[DONE]");
    }

    @Test
    void clientDisconnect_abortsTheUpstreamRequestOnTheWorker() throws Exception {
        long abortedBefore = totalAborted();
        org.eclipse.jetty.client.Request request = http.client.newRequest(base() + "/v1/chat/completions")
                .method("POST").body(new StringRequestContent("application/json", chat(true, 400)));
        CountDownLatch firstChunk = new CountDownLatch(1);
        request.onResponseContent((r, b) -> firstChunk.countDown());
        request.send(result -> { });
        assertThat(firstChunk.await(30, TimeUnit.SECONDS)).isTrue();
        request.abort(new Exception("client went away"));
        // 400 tokens at 25 ms would take 10 s: the worker sees the abort long before.
        await().atMost(Duration.ofSeconds(8)).until(() -> totalAborted() > abortedBefore);
    }

    private static long totalAborted() {
        return WORKERS.stream().mapToLong(w -> w.handler().abortedRequests()).sum();
    }

    @Test
    void badInput_getsOpenAiJsonErrors() throws Exception {
        assertError(http.postJson(base() + "/v1/chat/completions", "{\"messages\": [ "), 400, "invalid JSON");
        assertError(http.postJson(base() + "/v1/chat/completions", "{\"model\":\"mock-model\"}"), 400, "messages");
        assertError(http.post(base() + "/v1/chat/completions", "text/plain", "hi".getBytes()), 415, "content type");
        assertError(http.postJson(base() + "/v1/chat/completions",
                "{\"model\":\"gpt-17\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"), 404, "gpt-17");
        assertError(http.postJson(base() + "/v1/completions",
                "{\"prompt\":\"" + "x".repeat(200_000) + "\"}"), 413, "--max-body-bytes");
        assertError(http.get(base() + "/v1/chat/completions"), 405, "POST");
        assertError(http.get(base() + "/no/such/path"), 404, "no route");
    }

    static void assertError(ContentResponse response, int status, String messagePart) throws Exception {
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(status);
        assertThat(response.getHeaders().get("content-type")).startsWith("application/json");
        JsonNode error = JSON.readTree(response.getContentAsString()).path("error");
        assertThat(error.path("message").asText()).contains(messagePart);
        assertThat(error.path("code").asInt()).isEqualTo(status);
        assertThat(error.path("type").asText()).isNotBlank();
    }
}
