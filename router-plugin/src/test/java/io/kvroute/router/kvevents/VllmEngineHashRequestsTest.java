package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.protocol.KvEventWire;
import io.kvroute.router.LoopbackServer;
import io.kvroute.router.VllmStubWorker;
import io.kvroute.router.plugin.RouterMain;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.eclipse.jetty.server.Server;
import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;

/**
 * Requests vLLM salts, end to end through a real router ({@code --kv-events-hash engine},
 * {@code --cache-index exact}) in front of a vLLM-shaped stub worker ({@link VllmStubWorker}) whose
 * engine ({@link VllmEngineFake}, real JeroMQ) holds one chain under {@code xxhash_cbor},
 * {@code PYTHONHASHSEED=42}, block size 4, stored for a request with {@code cache_salt} "tenant-a": its
 * hashes are Python's ({@code vllm-hash/block_hashes.json}), so only the router's own computation of the
 * salted chain finds them. Clients send their token ids ({@code input_ids}) so the request's tokens are
 * the golden's. A request with that salt matches all 16 tokens; without it, with JSON null or with
 * another salt nothing; one with an image part or prompt embeddings is not looked up on the worker
 * (counted by reason); a {@code cache_salt} no engine takes is a 400; the salt reaches the worker untouched.
 */
class VllmEngineHashRequestsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static HttpResponse<String> post(RouterMain.RunningRouter router, String path, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(router.baseUrl() + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The sum of every series of {@code name} whose labels contain {@code labels}, from the router's /metrics. */
    private static double metric(RouterMain.RunningRouter router, String name, String labels) throws Exception {
        String text = HTTP.send(HttpRequest.newBuilder(URI.create(router.baseUrl() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        double sum = 0;
        for (String line : text.split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && line.contains(labels)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** The prefix the exact index found for the request {@code body} on {@code path}: its decision's matched tokens. */
    private static double matched(RouterMain.RunningRouter router, String path, String body) throws Exception {
        String selected = "kvroute_cache_selected_matched_tokens_sum";
        double before = metric(router, selected, "model_id=\"m\"");
        HttpResponse<String> r = post(router, path, body);
        assertThat(r.statusCode()).as(body + ": " + r.body()).isEqualTo(200);
        return metric(router, selected, "model_id=\"m\"") - before;
    }

    @Test
    void saltedRequest_matchesTheSaltedChain_multimodalAndEmbedsAreDeclined_aBadSaltIsA400() throws Exception {
        JsonNode salted = VllmKvEventsPlaneTest.golden("42", 4, "small", null, "tenant-a");
        String ids = Arrays.stream(VllmBlockHashGoldenTest.tokens(salted)).mapToObj(Integer::toString)
                .collect(Collectors.joining(",", "[", "]"));
        List<String> received = new CopyOnWriteArrayList<>();
        Server worker = VllmStubWorker.start(List.of("m"), received);
        try (ZContext ctx = new ZContext(1); VllmEngineFake engine = new VllmEngineFake(ctx, "kv@pod@m")) {
            engine.keep(KvEventWire.vllmBatch(1.0, List.of(KvEventWire.stored(
                    VllmBlockHashGoldenTest.wire(salted, "xxhash_cbor"), null, new int[0], 4, null, null)), 0));
            String template = "endpoint=" + engine.pubEndpoint + ";replay-endpoint=" + engine.replayEndpoint
                    + ";topic=kv@pod@m;block-size=4;hash-algo=xxhash_cbor;hash-seed=42";
            try (RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--load-source", "none",
                    "--worker-urls", LoopbackServer.url(worker), "--health-check-interval-secs", "0.2",
                    "--policy", "cache_aware", "--cache-index", "exact", "--kv-events-hash", "engine",
                    "--kv-events-template", template)) {
                await().atMost(WAIT).until(() -> metric(router, "kvroute_kv_events_workers_exact", "") == 1
                        && metric(router, "kvroute_kv_events_replays_total", "outcome=\"completed\"") >= 1);
                String completion = "{\"model\":\"m\",\"prompt\":\"p\",\"max_tokens\":1,\"input_ids\":" + ids;

                assertThat(matched(router, "/v1/completions", completion + ",\"cache_salt\":\"tenant-a\"}")).isEqualTo(16);
                assertThat(JSON.readTree(received.get(received.size() - 1)).path("cache_salt").asText())
                        .as("the salt reaches the engine").isEqualTo("tenant-a");
                assertThat(matched(router, "/v1/completions", completion + "}")).isZero();
                assertThat(matched(router, "/v1/completions", completion + ",\"cache_salt\":null}")).isZero();
                assertThat(matched(router, "/v1/completions", completion + ",\"cache_salt\":\"tenant-b\"}")).isZero();
                String chat = "{\"model\":\"m\",\"max_tokens\":1,\"cache_salt\":\"tenant-a\",\"input_ids\":" + ids
                        + ",\"messages\":[{\"role\":\"user\",\"content\":";
                assertThat(matched(router, "/v1/chat/completions", chat + "\"describe\"}]}")).isEqualTo(16);

                assertThat(matched(router, "/v1/chat/completions", chat + "[{\"type\":\"text\",\"text\":\"describe\"},"
                        + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"http://x/y.png\"}}]}]}")).isZero();
                assertThat(metric(router, "kvroute_kv_events_lookups_declined_total", "reason=\"multimodal\"")).isEqualTo(1);
                assertThat(matched(router, "/v1/completions", completion
                        + ",\"cache_salt\":\"tenant-a\",\"prompt_embeds\":\"AAAA\"}")).isZero();
                assertThat(metric(router, "kvroute_kv_events_lookups_declined_total", "reason=\"prompt_embeds\"")).isEqualTo(1);
                HttpResponse<String> embedsOnly = post(router, "/v1/completions",
                        "{\"model\":\"m\",\"max_tokens\":1,\"prompt_embeds\":\"AAAA\"}");
                assertThat(embedsOnly.statusCode()).as("vLLM takes prompt_embeds without a prompt: " + embedsOnly.body())
                        .isEqualTo(200);

                int forwarded = received.size();
                HttpResponse<String> bad = post(router, "/v1/completions", completion + ",\"cache_salt\":42}");
                assertThat(bad.statusCode()).isEqualTo(400);
                JsonNode error = JSON.readTree(bad.body()).path("error");
                assertThat(error.path("param").asText()).isEqualTo("cache_salt");
                assertThat(error.path("message").asText()).contains("'cache_salt' must be a string");
                assertThat(received).as("refused at the router").hasSize(forwarded);
            }
        } finally {
            worker.stop();
        }
    }
}
