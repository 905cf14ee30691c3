package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The router's scrape as a monitoring system sees it: every metric family carries HELP text ({@code promtool
 * check metrics} flags a family without one), and the series whose labels are known up front exist at zero on
 * a healthy fleet before their first event, so dashboards and {@code rate()} alerts read 0 instead of "no data".
 * The routers run with every optional family on (cache_aware over the exact KV-event index, the tokenizer and
 * its chat prefix cache; a PD pair).
 */
class MetricsExpositionE2ETest {

    private static final String CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],\"max_tokens\":2}";

    @Test
    void everyFamilyHasHelp_andKnownSeriesStartAtZero_onARegularFleet() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        try (TestFleet fleet = TestFleet.start(2, List.of("--tokenizer-path", tokenizer, "--decode-ms-per-step", "1"),
                List.of("--policy", "cache_aware", "--tokenizer-path", tokenizer, "--cache-index", "exact",
                        "--health-check-interval-secs", "0.2"));
                Http http = new Http()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> http.get(fleet.url("/metrics")).getContentAsString()
                    .contains("kvroute_kv_events_workers_exact 2"));
            assertThat(http.postJson(fleet.url("/v1/chat/completions"), CHAT).getStatus()).isEqualTo(200);
            String scrape = http.get(fleet.url("/metrics")).getContentAsString();

            assertThat(familiesWithoutHelp(scrape)).as("families without HELP text").isEmpty();
            String worker = fleet.workers.get(0).baseUrl();
            assertThat(scrape)
                    .contains("kvroute_retries_total{cause=\"connect\",endpoint=\"/v1/chat/completions\"} 0.0")
                    .contains("kvroute_retries_exhausted_total{endpoint=\"/generate\"} 0.0")
                    .contains("kvroute_upstream_errors_total{kind=\"timeout\",worker=\"" + worker + "\"} 0.0")
                    .contains("kvroute_worker_breaker_transitions_total{from=\"closed\",to=\"open\",worker=\"" + worker
                            + "\"} 0.0")
                    .contains("kvroute_pd_continuations_total{endpoint=\"/v1/completions\"} 0.0");
        }
    }

    @Test
    void everyFamilyHasHelp_onAPdFleet() throws Exception {
        try (PdFleet fleet = PdFleet.start(1, 1, List.of(), List.of(), List.of()); Http http = new Http()) {
            assertThat(http.postJson(fleet.url("/v1/chat/completions"), CHAT).getStatus()).isEqualTo(200);
            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            assertThat(familiesWithoutHelp(scrape)).as("families without HELP text").isEmpty();
            assertThat(scrape).contains("kvroute_pd_segments_count{endpoint=\"/v1/chat/completions\"} 0");
        }
    }

    /** Family name to HELP text for every {@code # HELP} line; the families whose text is empty. */
    static List<String> familiesWithoutHelp(String scrape) {
        Map<String, String> help = new LinkedHashMap<>();
        List<String> typed = new ArrayList<>();
        for (String line : scrape.split("\n")) {
            if (line.startsWith("# HELP ")) {
                String rest = line.substring(7);
                int space = rest.indexOf(' ');
                help.put(space < 0 ? rest : rest.substring(0, space), space < 0 ? "" : rest.substring(space + 1).trim());
            } else if (line.startsWith("# TYPE ")) {
                typed.add(line.substring(7).split(" ")[0]);
            }
        }
        List<String> missing = new ArrayList<>();
        for (String family : typed) {
            String text = help.get(family);
            if (text == null || text.isEmpty()) {
                missing.add(family);
            }
        }
        return missing;
    }
}
