package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.plugin.RouterMain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Exact cache routing from engine KV events, end to end: mock workers publish their prefix-cache
 * pages (SGLang format, discovered from {@code /server_info}'s {@code kv_events} block) and two router
 * replicas subscribe. A prompt sent through replica A lands, through replica B, on the worker that
 * cached it, although B never routed it: B knows from the engine, not from its own history.
 */
class KvEventsE2ETest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    private static double metric(String scrape, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " ([0-9.eE+-]+)$").matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(1)) : -1;
    }

    @Test
    void secondReplica_routesAPromptToTheWorkerThatCachedIt_fromEngineEventsAlone() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<String> routerArgs = List.of("--policy", "cache_aware", "--tokenizer-path", tokenizer, "--cache-index",
                "exact", "--cache-affinity-min-matched-tokens", "32", "--health-check-interval-secs", "0.2");
        try (TestFleet fleet = TestFleet.start(4, List.of("--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1"), routerArgs);
                Http http = new Http()) {
            List<String> urls = new ArrayList<>();
            fleet.workers.forEach(w -> urls.add(w.baseUrl()));
            List<String> args = new ArrayList<>(List.of("--port", "0", "--worker-urls", String.join(",", urls)));
            args.addAll(routerArgs);
            try (RouterMain.RunningRouter replicaB = RouterMain.start(args.toArray(String[]::new))) {
                for (String base : List.of(fleet.router.baseUrl(), replicaB.baseUrl())) {
                    await().atMost(Duration.ofSeconds(30)).until(() -> metric(http.get(base + "/metrics")
                            .getContentAsString(), "kvroute_kv_events_workers_exact") == 4);
                }
                int hits = 0;
                for (int i = 0; i < 6; i++) {
                    String text = ("tenant " + i + " shares this long system preamble about routing and caches; ").repeat(12);
                    double seenByB = metric(http.get(replicaB.baseUrl() + "/metrics").getContentAsString(),
                            "kvroute_kv_events_block_events_total");
                    assertThat(http.postJson(fleet.url("/v1/chat/completions"), chat(text)).getStatus()).isEqualTo(200);
                    // replica A's request made the engine store blocks; wait until replica B has applied those events
                    await().atMost(Duration.ofSeconds(10)).until(() -> metric(http.get(replicaB.baseUrl() + "/metrics")
                            .getContentAsString(), "kvroute_kv_events_block_events_total") > seenByB);
                    JsonNode reply = JSON.readTree(http.postJson(replicaB.baseUrl() + "/v1/chat/completions", chat(text))
                            .getContentAsString());
                    long cached = reply.path("usage").path("prompt_tokens_details").path("cached_tokens").asLong();
                    if (cached > 0) {
                        hits++;
                    }
                }
                String scrape = http.get(replicaB.baseUrl() + "/metrics").getContentAsString();
                assertThat(scrape).containsPattern("kvroute_cache_aware_decisions_total\\{[^}]*decision=\"cache_hit\"[^}]*index=\"exact\"");
                assertThat(hits).as("replica B's requests that hit the cache replica A filled").isEqualTo(6);
            }
        }
    }
}
