package io.kvroute.bench.stats;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

    private static final String TEXT = """
            # HELP kvroute_policy_decisions_total Routing decisions.
            # TYPE kvroute_policy_decisions_total counter
            kvroute_policy_decisions_total{policy="cache_aware",reason="cache_hit"} 7.0
            kvroute_policy_decisions_total{policy="cache_aware",reason="load_balance",} 3
            kvroute_policy_decisions_total{policy="round_robin",reason="load_balance"} 2.0 1700000000000
            kvroute_policy_decisions_total{reason="odd \\"quoted\\" \\\\ name",policy="x"} 1e0

            kvroute_other_total{reason="cache_hit"} 100
            process_uptime_seconds 12.5
            jvm_gc_pause_seconds_max{action="end of minor GC"} NaN
            broken{reason="unterminated} 3
            """;

    @Test
    void sumsDecisionCountersByReasonAcrossPolicies() {
        Map<String, Double> reasons = PrometheusText.sumBy(PrometheusText.parse(TEXT),
                "kvroute_policy_decisions_total", "reason");

        assertThat(reasons).containsExactly(
                Map.entry("cache_hit", 7.0),
                Map.entry("load_balance", 5.0),
                Map.entry("odd \"quoted\" \\ name", 1.0));
    }

    @Test
    void sumsByTwoLabels_joinedByAnUnderscore() {
        Map<String, Double> byPolicyAndReason = PrometheusText.sumBy(PrometheusText.parse(TEXT),
                "kvroute_policy_decisions_total", "policy", "reason");

        assertThat(byPolicyAndReason).containsExactly(
                Map.entry("cache_aware_cache_hit", 7.0),
                Map.entry("cache_aware_load_balance", 3.0),
                Map.entry("round_robin_load_balance", 2.0),
                Map.entry("x_odd \"quoted\" \\ name", 1.0));
    }

    @Test
    void parsesUnlabelledAndSpecialValues_skipsMalformedLines() {
        List<PrometheusText.Sample> samples = PrometheusText.parse(TEXT);

        assertThat(samples).extracting(PrometheusText.Sample::name).doesNotContain("broken");
        assertThat(samples).filteredOn(s -> s.name().equals("process_uptime_seconds"))
                .singleElement().satisfies(s -> {
                    assertThat(s.value()).isEqualTo(12.5);
                    assertThat(s.labels()).isEmpty();
                });
        assertThat(samples).filteredOn(s -> s.name().equals("jvm_gc_pause_seconds_max"))
                .singleElement().satisfies(s -> assertThat(s.value()).isNaN());
    }

    @Test
    void emptyText_hasNoSamples() {
        assertThat(PrometheusText.parse("")).isEmpty();
        assertThat(PrometheusText.sumBy(List.of(), "m", "reason")).isEmpty();
    }
}
