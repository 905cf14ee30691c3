package io.kvroute.router.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The memoized per-request meters keep one series per tag combination, exactly as rebuilt meters did. */
class RouterMetricsMemoTest {

    private final RouterMetrics metrics = new RouterMetrics();

    @Test
    void eachTagCombinationCountsInItsOwnSeries() {
        metrics.request("/v1/chat/completions", 200);
        metrics.request("/v1/chat/completions", 200);
        metrics.request("/v1/chat/completions", 503);
        metrics.request("/v1/completions", 200);
        metrics.decision("round_robin", "round_robin");
        metrics.decision("cache_aware", "cache_hit");
        metrics.decision("cache_aware", "cache_hit");

        String text = metrics.scrape();
        assertThat(text)
                .contains("kvroute_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"} 2.0")
                .contains("kvroute_requests_total{endpoint=\"/v1/chat/completions\",status=\"503\"} 1.0")
                .contains("kvroute_requests_total{endpoint=\"/v1/completions\",status=\"200\"} 1.0")
                .contains("kvroute_policy_decisions_total{policy=\"cache_aware\",reason=\"cache_hit\"} 2.0")
                .contains("kvroute_policy_decisions_total{policy=\"round_robin\",reason=\"round_robin\"} 1.0");
    }

    @Test
    void stageTimersKeepStageAndEndpointApart() {
        metrics.overheadStage("parse", "/v1/chat/completions", 5_000);
        metrics.overheadStage("parse", "/v1/chat/completions", 7_000);
        metrics.overheadStage("select", "/v1/chat/completions", 3_000);
        metrics.overheadStage("parse", "/v1/completions", 9_000);
        metrics.overheadTokenize("/v1/chat/completions", "hit", 2_000);
        metrics.overheadTokenize("/v1/chat/completions", "miss", 4_000);

        String text = metrics.scrape();
        assertThat(text)
                .contains("kvroute_router_overhead_parse_seconds_count{endpoint=\"/v1/chat/completions\"} 2")
                .contains("kvroute_router_overhead_select_seconds_count{endpoint=\"/v1/chat/completions\"} 1")
                .contains("kvroute_router_overhead_parse_seconds_count{endpoint=\"/v1/completions\"} 1")
                .contains("kvroute_router_overhead_tokenize_seconds_count{cache=\"hit\",endpoint=\"/v1/chat/completions\"} 1")
                .contains("kvroute_router_overhead_tokenize_seconds_count{cache=\"miss\",endpoint=\"/v1/chat/completions\"} 1");
    }
}
