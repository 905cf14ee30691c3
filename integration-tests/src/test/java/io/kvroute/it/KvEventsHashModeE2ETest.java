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
 * {@code --kv-events-hash tokens} end to end: four mock workers publish KV events whose block
 * hashes are seeded per process ({@code --kv-events-hash-seed random}, as vLLM's are: unrelated to
 * the tokens for anyone else) with correct {@code token_ids}. Replica A spreads prompts round-robin;
 * replica T ({@code tokens}) must send each prompt again to the worker A chose, from the events
 * alone; replica E ({@code engine}, today's keying) cannot match a single block. The prompts share
 * a long preamble, so later prompts' BlockStored chains continue from a parent stored earlier.
 */
class KvEventsHashModeE2ETest {

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    private static List<String> replicaArgs(List<String> urls, String tokenizer, String hashMode) {
        return List.of("--port", "0", "--worker-urls", String.join(",", urls), "--policy", "cache_aware",
                "--tokenizer-path", tokenizer, "--cache-index", "exact", "--cache-affinity-min-matched-tokens", "32",
                "--health-check-interval-secs", "0.2", "--kv-events-hash", hashMode);
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name, String... labels) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    @Test
    void tokensKeying_routesRepeatedPromptsToTheHoldingWorker_engineKeyingCannot() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        try (TestFleet fleet = TestFleet.start(4, List.of("--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1", "--kv-events-hash-seed", "random"),
                List.of("--policy", "round_robin", "--cache-index", "approximate", "--tokenizer-path", tokenizer));
                Http http = new Http()) {
            List<String> urls = new ArrayList<>();
            fleet.workers.forEach(w -> urls.add(w.baseUrl()));
            try (RouterMain.RunningRouter tok = RouterMain.start(replicaArgs(urls, tokenizer, "tokens").toArray(String[]::new));
                    RouterMain.RunningRouter eng = RouterMain.start(replicaArgs(urls, tokenizer, "engine")
                            .toArray(String[]::new))) {
                for (RouterMain.RunningRouter r : List.of(tok, eng)) {
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> scrape(http, r, "kvroute_kv_events_workers_exact") == 4);
                }
                String preamble = "You are the routing assistant of a large fleet; always answer briefly. ".repeat(8);
                for (int i = 0; i < 6; i++) {
                    String text = preamble + ("question " + i + " asks about caches and their workers. ").repeat(6);
                    double storedBefore = scrape(http, tok, "kvroute_kv_events_block_events_total");
                    ContentResponse viaA = http.postJson(fleet.url("/v1/chat/completions"), chat(text));
                    assertThat(viaA.getStatus()).isEqualTo(200);
                    String holder = viaA.getHeaders().get("x-kvroute-worker");
                    await().atMost(Duration.ofSeconds(20)) // the BlockStored reaches replica T
                            .until(() -> scrape(http, tok, "kvroute_kv_events_block_events_total") > storedBefore);
                    ContentResponse viaT = http.postJson(tok.baseUrl() + "/v1/chat/completions", chat(text));
                    assertThat(viaT.getStatus()).isEqualTo(200);
                    assertThat(viaT.getHeaders().get("x-kvroute-worker")).as("prompt %d", i).isEqualTo(holder);
                    double beforeE = scrape(http, tok, "kvroute_kv_events_block_events_total");
                    ContentResponse viaE = http.postJson(eng.baseUrl() + "/v1/chat/completions", chat(text));
                    assertThat(viaE.getStatus()).isEqualTo(200);
                    if (!holder.equals(viaE.getHeaders().get("x-kvroute-worker"))) {
                        // E's worker cached the prompt too: let T see it before the next prompt's count starts
                        await().atMost(Duration.ofSeconds(20))
                                .until(() -> scrape(http, tok, "kvroute_kv_events_block_events_total") > beforeE);
                    }
                }
                String hit = "decision=\"cache_hit\"";
                assertThat(scrape(http, tok, "kvroute_cache_aware_decisions_total", hit, "index=\"exact\"")).isEqualTo(6);
                assertThat(scrape(http, eng, "kvroute_cache_aware_decisions_total", hit)).isZero();
                for (String reason : List.of("unknown_parent", "missing_token_ids", "token_ids_length")) {
                    assertThat(scrape(http, tok, "kvroute_kv_events_malformed_total", "reason=\"" + reason + "\""))
                            .as(reason).isZero();
                }
            }
        }
    }
}
