package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import java.time.Duration;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;

/**
 * SGLang's {@code /flush_cache} on a mock worker, seen by a router over real sockets: the flush is
 * published as {@code AllBlocksCleared}, the worker's blocks leave the router's exact index, and
 * the router stops routing by a cache that no longer exists.
 */
class KvFlushE2ETest {

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    @Test
    void flushCache_clearsTheWorkersBlocksFromTheRoutersIndex() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        try (TestFleet fleet = TestFleet.start(2, List.of("--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1"), List.of("--policy", "cache_aware", "--tokenizer-path", tokenizer,
                "--cache-index", "exact", "--cache-affinity-min-matched-tokens", "32", "--health-check-interval-secs", "0.2"));
                Http http = new Http()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> metric(http, fleet, "kvroute_kv_events_workers_exact") == 2);
            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            for (var w : fleet.workers) { // the silence gauges carry the worker's URL; the mock sends heartbeats
                String labels = "worker=\"" + w.baseUrl() + "\"";
                assertThat(MetricSum.of(scrape, "kvroute_kv_events_publisher_silent", labels, "rank=\"0\"")).isZero();
                assertThat(scrape).contains("kvroute_kv_events_publisher_last_event_age_seconds{rank=\"0\"," + labels);
            }
            String text = "a tenant's long system prompt about flushing prefix caches and routing. ".repeat(10);
            ContentResponse first = http.postJson(fleet.url("/v1/chat/completions"), chat(text));
            assertThat(first.getStatus()).isEqualTo(200);
            String holder = first.getHeaders().get("x-kvroute-worker");
            await().atMost(Duration.ofSeconds(20)).until(() -> metric(http, fleet, "kvroute_kv_events_index_blocks") > 0);
            ContentResponse second = http.postJson(fleet.url("/v1/chat/completions"), chat(text));
            assertThat(second.getHeaders().get("x-kvroute-worker")).isEqualTo(holder);
            assertThat(hits(http, fleet)).isEqualTo(1);

            ContentResponse flushed = http.post(holder + "/flush_cache", "application/json", new byte[0]);
            assertThat(flushed.getStatus()).isEqualTo(200);
            assertThat(flushed.getContentAsString()).startsWith("Cache flushed.");
            // only the holder had blocks: AllBlocksCleared empties the index
            await().atMost(Duration.ofSeconds(20)).until(() -> metric(http, fleet, "kvroute_kv_events_index_blocks") == 0);
            assertThat(metric(http, fleet, "kvroute_kv_events_workers_exact")).isEqualTo(2); // still live, now empty

            ContentResponse third = http.postJson(fleet.url("/v1/chat/completions"), chat(text));
            assertThat(third.getStatus()).isEqualTo(200);
            assertThat(hits(http, fleet)).as("no cache_hit decision after the flush").isEqualTo(1);
        }
    }

    private static double metric(Http http, TestFleet fleet, String name) throws Exception {
        return MetricSum.of(http.get(fleet.url("/metrics")).getContentAsString(), name);
    }

    private static double hits(Http http, TestFleet fleet) throws Exception {
        return MetricSum.of(http.get(fleet.url("/metrics")).getContentAsString(), "kvroute_cache_aware_decisions_total",
                "decision=\"cache_hit\"", "index=\"exact\"");
    }
}
