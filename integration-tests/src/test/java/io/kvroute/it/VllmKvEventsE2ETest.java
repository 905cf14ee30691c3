package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.plugin.RouterMain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;

/**
 * Mock workers publishing KV events in vLLM's shape ({@code --kv-events-format vllm}: map events,
 * replay answers with the topic frame, no heartbeat) with hashes seeded per process, as vLLM's are.
 * A router with the exact index ({@code --kv-events-hash tokens}) sends a repeated prompt to the
 * worker that holds it; a router started afterwards, while the workers stay quiet, rebuilds their
 * blocks from the replay sockets alone and routes the same prompt to the same holder.
 */
class VllmKvEventsE2ETest {

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    private static String[] exactRouter(List<String> urls, String tokenizer) {
        return List.of("--port", "0", "--worker-urls", String.join(",", urls), "--policy", "cache_aware",
                "--tokenizer-path", tokenizer, "--cache-index", "exact", "--cache-affinity-min-matched-tokens", "32",
                "--health-check-interval-secs", "0.2", "--kv-events-hash", "tokens").toArray(String[]::new);
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name, String... labels) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    @Test
    void vllmShapedWorkers_exactIndexRoutesToTheHolder_andARestartedRouterRebuildsFromReplay() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        try (TestFleet fleet = TestFleet.start(2, List.of("--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1", "--kv-events-hash-seed", "random", "--kv-events-format", "vllm"),
                List.of("--policy", "round_robin", "--cache-index", "approximate", "--tokenizer-path", tokenizer));
                Http http = new Http()) {
            List<String> urls = new ArrayList<>();
            fleet.workers.forEach(w -> urls.add(w.baseUrl()));
            List<String> texts = new ArrayList<>();
            List<String> holders = new ArrayList<>();
            String preamble = "You are the routing assistant of a large fleet; always answer briefly. ".repeat(8);
            try (RouterMain.RunningRouter first = RouterMain.start(exactRouter(urls, tokenizer))) {
                // no heartbeat: two quiet workers are exact (caught up from an empty replay) before any traffic
                await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, first, "kvroute_kv_events_workers_exact") == 2);
                for (int i = 0; i < 4; i++) {
                    String text = preamble + ("question " + i + " asks about caches and their workers. ").repeat(6);
                    double storedBefore = scrape(http, first, "kvroute_kv_events_block_events_total");
                    ContentResponse viaRr = http.postJson(fleet.url("/v1/chat/completions"), chat(text));
                    assertThat(viaRr.getStatus()).isEqualTo(200);
                    String holder = viaRr.getHeaders().get("x-kvroute-worker");
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> scrape(http, first, "kvroute_kv_events_block_events_total") > storedBefore);
                    ContentResponse viaExact = http.postJson(first.baseUrl() + "/v1/chat/completions", chat(text));
                    assertThat(viaExact.getStatus()).isEqualTo(200);
                    assertThat(viaExact.getHeaders().get("x-kvroute-worker")).as("prompt %d", i).isEqualTo(holder);
                    texts.add(text);
                    holders.add(holder);
                }
                assertThat(scrape(http, first, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"",
                        "index=\"exact\"")).isEqualTo(4);
                assertThat(scrape(http, first, "kvroute_kv_events_malformed_total")).isZero();
            }
            // a new router: the workers publish nothing until it routes, so only their replay buffers can tell it
            try (RouterMain.RunningRouter second = RouterMain.start(exactRouter(urls, tokenizer))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, second, "kvroute_kv_events_workers_exact") == 2
                        && scrape(http, second, "kvroute_kv_events_block_events_total") > 0);
                assertThat(scrape(http, second, "kvroute_kv_events_replays_total", "outcome=\"completed\"")).isEqualTo(2);
                for (int i = 0; i < texts.size(); i++) {
                    ContentResponse again = http.postJson(second.baseUrl() + "/v1/chat/completions", chat(texts.get(i)));
                    assertThat(again.getStatus()).isEqualTo(200);
                    assertThat(again.getHeaders().get("x-kvroute-worker")).as("prompt %d after restart", i)
                            .isEqualTo(holders.get(i));
                }
                assertThat(scrape(http, second, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"",
                        "index=\"exact\"")).isEqualTo(texts.size());
            }
        }
    }
}
