package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;

/**
 * A vLLM node serving data-parallel ranks 2 and 3 at its own URL (hybrid load balancing,
 * {@code --data-parallel-start-rank 2 --data-parallel-size-local 2}): its ranks publish at the
 * {@code --kv-events-config} ports + their global rank, so the router's template says
 * {@code dp-start-rank=2} over the config every node shares. The vLLM-API mock plays that node, its
 * rank r's sockets on base + 2 + r; it refuses a rank header outside its own two ranks with a 400, as
 * vLLM refuses one outside {@code [0, local size)}. A prompt cached on local rank 1 (global rank 3) is
 * routed back with {@code X-data-parallel-rank: 1}.
 */
class VllmHybridLbE2ETest {

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name);
    }

    @Test
    void startRankMovesTheSockets_theRankHeaderStaysLocal() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        int startRank = 2;
        // the node's PUB ports (global ranks 2, 3) and its replay ports right after them
        int nodePubPort = MockWorkerMain.freePortRangeForTests("127.0.0.1", 4);
        int sharedPubBase = nodePubPort - startRank;
        int sharedReplayBase = nodePubPort + 2 - startRank;
        try (Http http = new Http();
                MockWorkerMain.MockWorker node = MockWorkerMain.start("--port", "0", "--engine-api", "vllm",
                        "--tokenizer-path", tokenizer, "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1",
                        "--kv-events-hash-seed", "random", "--dp-size", "2",
                        "--kv-events-endpoint", "tcp://127.0.0.1:" + nodePubPort,
                        "--kv-events-replay-endpoint", "tcp://127.0.0.1:" + (nodePubPort + 2));
                RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--worker-urls", node.baseUrl(),
                        "--policy", "cache_aware", "--tokenizer-path", tokenizer, "--cache-index", "exact",
                        "--cache-affinity-min-matched-tokens", "32", "--health-check-interval-secs", "0.2",
                        "--kv-events-worker-templates", node.baseUrl() + "=endpoint=tcp://*:" + sharedPubBase
                                + ";replay-endpoint=tcp://*:" + sharedReplayBase
                                + ";topic=kv;block-size=16;dp-size=2;dp-start-rank=" + startRank)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, router, "kvroute_kv_events_workers_exact") == 1);

            String text = "You route requests for a fleet of vLLM engines; answer briefly. ".repeat(6)
                    + "A question only the second local rank of the hybrid node has seen. ".repeat(6);
            double before = scrape(http, router, "kvroute_kv_events_block_events_total");
            var direct = http.client.newRequest(node.baseUrl() + "/v1/chat/completions").method(HttpMethod.POST)
                    .timeout(30, TimeUnit.SECONDS)
                    .body(new StringRequestContent("application/json", chat(text), StandardCharsets.UTF_8))
                    .headers(h -> h.put("X-data-parallel-rank", "1"));
            assertThat(direct.send().getStatus()).isEqualTo(200);
            // the router hears the node's rank 1 on the shared base + 3, or it would never see these blocks
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> scrape(http, router, "kvroute_kv_events_block_events_total") > before);

            long[] ranksBefore = node.requestsByRank();
            ContentResponse routed = http.postJson(router.baseUrl() + "/v1/chat/completions", chat(text));
            assertThat(routed.getStatus()).as(routed.getContentAsString()).isEqualTo(200);
            long[] ranksAfter = node.requestsByRank();
            // idle ranks tie and the node's balancer would pick local rank 0: rank 1 got it only through the header
            assertThat(ranksAfter[1] - ranksBefore[1]).as("served by local rank 1").isEqualTo(1);
            assertThat(ranksAfter[0]).isEqualTo(ranksBefore[0]);
        }
    }
}
