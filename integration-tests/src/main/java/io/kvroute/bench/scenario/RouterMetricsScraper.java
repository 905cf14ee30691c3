package io.kvroute.bench.scenario;

import io.kvroute.bench.stats.PrometheusText;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads the router's Prometheus {@code /metrics} after a run: decisions by reason (summed over
 * policies) from {@code kvroute_policy_decisions_total{policy,reason}}. A failed scrape returns an
 * empty result with a warning instead of failing the benchmark.
 */
final class RouterMetricsScraper {

    static final String DECISIONS_METRIC = "kvroute_policy_decisions_total";

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private RouterMetricsScraper() {}

    static List<PrometheusText.Sample> scrape(String routerUrl) {
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(URI.create(routerUrl + "/metrics")).timeout(TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                System.err.println("warning: GET " + routerUrl + "/metrics answered " + response.statusCode());
                return List.of();
            }
            return PrometheusText.parse(response.body());
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            System.err.println("warning: cannot scrape " + routerUrl + "/metrics: " + e);
            return List.of();
        }
    }

    static final String CONTINUATIONS_METRIC = "kvroute_pd_continuations_total";

    /** PD continuation segments the router relayed, summed over labels (0 when the metric is absent). */
    static long continuations(List<PrometheusText.Sample> samples) {
        return Math.round(samples.stream().filter(s -> s.name().equals(CONTINUATIONS_METRIC))
                .mapToDouble(PrometheusText.Sample::value).sum());
    }

    static final String CACHE_AWARE_METRIC = "kvroute_cache_aware_decisions_total";

    /**
     * Decisions by reason, plus {@code index:exact} / {@code index:approximate}: the cache-aware decisions
     * each index answered ({@value #CACHE_AWARE_METRIC} by {@code index}), absent for other policies.
     */
    static Map<String, Double> decisionReasons(List<PrometheusText.Sample> samples) {
        Map<String, Double> reasons = new TreeMap<>(PrometheusText.sumBy(samples, DECISIONS_METRIC, "reason"));
        PrometheusText.sumBy(samples, CACHE_AWARE_METRIC, "index").forEach((index, n) -> {
            if (!index.isEmpty() && n > 0) {
                reasons.put("index:" + index, n);
            }
        });
        return reasons;
    }
}
