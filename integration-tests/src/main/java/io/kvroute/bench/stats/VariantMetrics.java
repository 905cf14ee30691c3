package io.kvroute.bench.stats;

import io.kvroute.bench.client.RequestRecord;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything the reports say about one variant, derived from its request records.
 *
 * <p>Units: latencies in simulated ms (wall x {@code timeScale}); {@code outputTokPerSec} in output
 * tokens per simulated second over the span from the first actual send to the last response end;
 * {@code lateness} in wall ms (a property of the client, not of the simulated engine);
 * {@code cacheHitRate} = sum of {@code cached_tokens} / sum of {@code prompt_tokens} over
 * successful requests (NaN when no prompt tokens were reported).
 *
 * @param classes per request class, sorted by name; empty when no request has a class
 * @param tags per tag in first-seen schedule order (e.g. saturation steps); empty when untagged
 */
public record VariantMetrics(
        LatencySummary all,
        Map<String, LatencySummary> classes,
        Map<String, TagMetrics> tags,
        double outputTokPerSec,
        int requestsOk,
        int requestsFailed,
        double cacheHitRate,
        LatencyStats latenessWallMs) {

    /** Per-tag block: latency plus the tag's own throughput. */
    public record TagMetrics(LatencySummary latency, double outputTokPerSec, int requestsOk, int requestsFailed) {}

    public static VariantMetrics of(List<RequestRecord> records, double timeScale) {
        Map<String, List<RequestRecord>> byClass = new TreeMap<>();
        Map<String, List<RequestRecord>> byTag = new LinkedHashMap<>();
        List<RequestRecord> inScheduleOrder = new ArrayList<>(records);
        inScheduleOrder.sort((a, b) -> Long.compare(a.scheduledNanos(), b.scheduledNanos()));
        for (RequestRecord r : inScheduleOrder) {
            if (!r.requestClass().isEmpty()) {
                byClass.computeIfAbsent(r.requestClass(), k -> new ArrayList<>()).add(r);
            }
            if (!r.tag().isEmpty()) {
                byTag.computeIfAbsent(r.tag(), k -> new ArrayList<>()).add(r);
            }
        }
        Map<String, LatencySummary> classes = new LinkedHashMap<>();
        byClass.forEach((k, v) -> classes.put(k, LatencySummary.of(v, timeScale)));
        Map<String, TagMetrics> tags = new LinkedHashMap<>();
        byTag.forEach((k, v) -> tags.put(k, new TagMetrics(LatencySummary.of(v, timeScale),
                outputTokPerSec(v, timeScale), countOk(v), v.size() - countOk(v))));

        double hitRate = hitRate(records);
        LatencyStats lateness = LatencyStats.of(records.stream().mapToDouble(r -> r.latenessNanos() / 1e6).toArray());
        int ok = countOk(records);
        return new VariantMetrics(LatencySummary.of(records, timeScale), classes, tags,
                outputTokPerSec(records, timeScale), ok, records.size() - ok, hitRate, lateness);
    }

    /** Cached prompt tokens / prompt tokens over the successful requests; NaN when they have none. */
    public static double hitRate(List<RequestRecord> records) {
        long prompt = 0;
        long cached = 0;
        for (RequestRecord r : records) {
            if (r.ok()) {
                prompt += r.promptTokens();
                cached += r.cachedTokens();
            }
        }
        return prompt == 0 ? Double.NaN : (double) cached / prompt;
    }

    private static int countOk(List<RequestRecord> records) {
        return (int) records.stream().filter(RequestRecord::ok).count();
    }

    /** Output tokens of successful requests per simulated second; NaN when nothing completed. */
    static double outputTokPerSec(List<RequestRecord> records, double timeScale) {
        long firstSent = Long.MAX_VALUE;
        long lastEnd = Long.MIN_VALUE;
        long tokens = 0;
        for (RequestRecord r : records) {
            if (r.ok()) {
                firstSent = Math.min(firstSent, r.sentNanos());
                lastEnd = Math.max(lastEnd, r.endNanos());
                tokens += r.outputTokens();
            }
        }
        if (firstSent == Long.MAX_VALUE || lastEnd <= firstSent) {
            return Double.NaN;
        }
        double simulatedSeconds = (lastEnd - firstSent) / 1e9 * timeScale;
        return tokens / simulatedSeconds;
    }
}
