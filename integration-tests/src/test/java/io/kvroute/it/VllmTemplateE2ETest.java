package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;

/**
 * A vLLM-API mock worker ({@code --engine-api vllm}, engine block size 16) whose operator template says block
 * size 32, beside one whose template is right: once {@code /metrics} reports {@code vllm:cache_config_info}'s
 * block size the router refuses the wrong one (unsubscribed, counted by reason) and a prompt it holds gets no
 * exact match, while the other stays exact. In {@code --cache-index auto} the refused worker, like any vLLM
 * worker without KV events, is routed by the prefix tree: a prompt the router sent it goes back to it. Exact
 * routing, rank pinning and replay over templated vLLM workers in a mixed fleet are {@link MixedFleetE2ETest}.
 */
class VllmTemplateE2ETest {

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    private static String template(MockWorkerMain.MockWorker w, int blockSize) {
        return w.baseUrl() + "=endpoint=tcp://*:" + URI.create(w.kvEventEndpoints().get(0)).getPort()
                + ";replay-endpoint=tcp://*:" + URI.create(w.kvEventReplayEndpoints().get(0)).getPort()
                + ";topic=kv;block-size=" + blockSize + ";dp-size=1";
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name, String... labels) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    @Test
    void templateBlockSizeDisagreeingWithEngine_refusedWithNoExactMatches_routedByThePrefixTree() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<String> vllm = List.of("--port", "0", "--engine-api", "vllm", "--tokenizer-path", tokenizer,
                "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1", "--kv-events-hash-seed", "random");
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        try (Http http = new Http()) {
            MockWorkerMain.MockWorker right = MockWorkerMain.start(vllm.toArray(String[]::new));
            workers.add(right);
            MockWorkerMain.MockWorker wrong = MockWorkerMain.start(vllm.toArray(String[]::new));
            workers.add(wrong);
            try (RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--worker-urls",
                    right.baseUrl() + "," + wrong.baseUrl(), "--policy", "cache_aware", "--tokenizer-path", tokenizer,
                    "--cache-index", "auto", "--cache-affinity-min-matched-tokens", "32",
                    "--health-check-interval-secs", "0.2",
                    "--kv-events-worker-templates", template(right, 16) + "," + template(wrong, 32))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, router, "kvroute_kv_events_workers_exact") == 1
                        && scrape(http, router, "kvroute_kv_events_workers_refused_total",
                                "reason=\"block_size_mismatch\"") == 1);
                assertThat(scrape(http, router, "kvroute_kv_events_workers_unknown")).isZero();

                // the refused worker's blocks are not indexed: a prompt it holds is a miss, not an exact hit (the miss
                // may land on the other worker, whose blocks of it are then indexed: no count of block events here)
                String text = "A question the worker with the wrong template has already answered. ".repeat(6);
                assertThat(http.postJson(wrong.baseUrl() + "/v1/chat/completions", chat(text)).getStatus()).isEqualTo(200);
                assertThat(http.postJson(router.baseUrl() + "/v1/chat/completions", chat(text)).getStatus()).isEqualTo(200);
                assertThat(scrape(http, router, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"")).isZero();
                assertThat(scrape(http, router, "kvroute_cache_aware_decisions_total", "decision=\"cache_miss\"")).isEqualTo(1);

                // the prefix tree answers for the refused worker: new prompts until a miss lands on it, then once more
                String onWrong = null;
                for (int i = 0; i < 30 && onWrong == null; i++) {
                    String fresh = ("Prompt " + i + " for whichever worker the router picks. ").repeat(6);
                    ContentResponse first = http.postJson(router.baseUrl() + "/v1/chat/completions", chat(fresh));
                    assertThat(first.getStatus()).isEqualTo(200);
                    onWrong = wrong.baseUrl().equals(first.getHeaders().get("x-kvroute-worker")) ? fresh : null;
                }
                assertThat(onWrong).as("a cache miss landed on the refused worker").isNotNull();
                double treeHits = scrape(http, router, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"",
                        "index=\"approximate\"");
                ContentResponse again = http.postJson(router.baseUrl() + "/v1/chat/completions", chat(onWrong));
                assertThat(again.getHeaders().get("x-kvroute-worker")).isEqualTo(wrong.baseUrl());
                assertThat(scrape(http, router, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"",
                        "index=\"approximate\"")).isEqualTo(treeHits + 1);
            }
        } finally {
            workers.forEach(MockWorkerMain.MockWorker::close);
        }
    }
}
