package io.kvroute.bench;

import io.kvroute.bench.client.RequestRecord;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The raw outcome of running one variant of a scenario; metrics are derived by the report.
 *
 * @param variant variant name
 * @param records one per scheduled request (empty for micro-benchmark scenarios such as {@code tree})
 * @param wallNanos wall-clock duration of the measured run
 * @param decisionReasons router decisions by reason, summed over policies from
 *     {@code kvroute_policy_decisions_total{policy,reason}}; empty when not scraped
 * @param continuations PD continuation segments seen, or null when the scenario has none (only {@code pd})
 * @param cases micro-benchmark cases (only the {@code tree} scenario); empty otherwise
 */
public record VariantResult(
        String variant,
        List<RequestRecord> records,
        long wallNanos,
        Map<String, Double> decisionReasons,
        Long continuations,
        List<CaseResult> cases) {

    public VariantResult {
        Objects.requireNonNull(variant, "variant");
        records = List.copyOf(records);
        decisionReasons = Map.copyOf(decisionReasons);
        cases = List.copyOf(cases);
    }

    /** A load-test result without PD continuations or micro-benchmark cases. */
    public static VariantResult of(String variant, List<RequestRecord> records, long wallNanos,
            Map<String, Double> decisionReasons) {
        return new VariantResult(variant, records, wallNanos, decisionReasons, null, List.of());
    }

    /** One micro-benchmark case: median time, the seed implementation's time and their ratio. */
    public record CaseResult(String name, double medianUs, double seedUs, double speedup) {}
}
