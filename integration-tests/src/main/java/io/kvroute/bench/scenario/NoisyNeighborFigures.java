package io.kvroute.bench.scenario;

import io.kvroute.bench.client.RequestRecord;
import io.kvroute.bench.stats.VariantMetrics;
import io.kvroute.bench.workload.NoisyNeighborWorkload;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The figures of one {@code noisy-neighbor} run (one arm, one seed) computed from the client's records,
 * in simulated seconds (wall nanoseconds times the speedup). Pure.
 *
 * <p>TTFT is measured from the request's intended send time (its slot in the open-loop schedule), so client
 * lateness counts against the arm. A request that did not succeed has an infinite TTFT in percentiles: a
 * p99 over a set with more than 1 % failures is infinite. "Shed" = HTTP 429 or 503 (the router's refusals);
 * "failed" = any other unsuccessful request (timeout, 5xx, broken stream); "cut" = a request that received its
 * first token and then did not end successfully for another reason than the client's own timeout (what
 * preemption must never do).
 */
record NoisyNeighborFigures(
        double chatTtftP99NoiseSec,
        long chatShed,
        double chatHitRateNoise,
        double interactiveTtftP99Sec,
        double batchServiceShare,
        double goodputTokensPerSec,
        double chatTtftP90QuietSec,
        List<Double> chatTtftP90AfterNoiseBinsSec,
        long cutAfterFirstByte,
        long failed,
        long requests,
        long noisyShed,
        long batchShed) {

    /** Time shape of the run in simulated milliseconds, the SLOs and the wall-to-simulated factor. */
    record Frame(double speedup, long noiseStartMs, long noiseEndMs, long durationMs, long recoveryBinMs,
            double sloTtftSec, double batchSloTtftSec) {}

    static NoisyNeighborFigures of(List<RequestRecord> records, Frame f) {
        Predicate<RequestRecord> chat = r -> r.requestClass().equals(NoisyNeighborWorkload.CHAT);
        Predicate<RequestRecord> inNoise = r -> between(simMs(r.scheduledNanos(), f), f.noiseStartMs(), f.noiseEndMs());
        Predicate<RequestRecord> afterNoise = r -> between(simMs(r.scheduledNanos(), f), f.noiseEndMs(), f.durationMs());
        List<RequestRecord> chatNoise = filter(records, chat.and(inNoise));
        List<Double> bins = new ArrayList<>();
        for (long from = f.noiseEndMs(); from < f.durationMs(); from += f.recoveryBinMs()) {
            long start = from;
            long end = Math.min(f.durationMs(), from + f.recoveryBinMs());
            bins.add(percentile(ttftsSec(filter(records, chat.and(r -> between(simMs(r.scheduledNanos(), f), start, end))), f),
                    0.90));
        }
        long tokensOk = 0;
        double serviceAll = 0;
        double serviceBatch = 0;
        for (RequestRecord r : records) {
            if (!r.ok()) {
                continue;
            }
            double ttft = ttftSec(r, f);
            double slo = r.requestClass().equals(NoisyNeighborWorkload.BATCH) ? f.batchSloTtftSec() : f.sloTtftSec();
            if (ttft <= slo) {
                tokensOk += r.promptTokens() + r.outputTokens();
            }
            double engineWork = r.promptTokens() - r.cachedTokens() + r.outputTokens();
            serviceAll += engineWork;
            if (r.requestClass().equals(NoisyNeighborWorkload.BATCH)) {
                serviceBatch += engineWork;
            }
        }
        return new NoisyNeighborFigures(
                percentile(ttftsSec(chatNoise, f), 0.99),
                count(records, chat.and(NoisyNeighborFigures::shed)),
                VariantMetrics.hitRate(chatNoise),
                percentile(ttftsSec(filter(records, r -> r.requestClass().equals(NoisyNeighborWorkload.INTERACTIVE)), f), 0.99),
                serviceAll == 0 ? Double.NaN : serviceBatch / serviceAll,
                tokensOk / (f.durationMs() / 1e3),
                percentile(ttftsSec(filter(records, chat.and(afterNoise)), f), 0.90),
                List.copyOf(bins),
                count(records, r -> r.firstTokenNanos() >= 0 && !r.ok() && !clientTimeout(r)),
                count(records, r -> !r.ok() && !shed(r)),
                records.size(),
                count(records, r -> r.requestClass().equals(NoisyNeighborWorkload.NOISY) && shed(r)),
                count(records, r -> r.requestClass().equals(NoisyNeighborWorkload.BATCH) && shed(r)));
    }

    /**
     * Seconds after the noise stopped until the chat tenants' TTFT p90 stays within {@code factor} x the
     * isolated arm's p90 over the same quiet period: the end of the last recovery bin above it (0 when none
     * is; infinite when the last bin still is).
     */
    double recoverySec(NoisyNeighborFigures isolated, double factor, Frame f) {
        double limit = factor * isolated.chatTtftP90QuietSec();
        int lastBad = -1;
        for (int i = 0; i < chatTtftP90AfterNoiseBinsSec.size(); i++) {
            if (chatTtftP90AfterNoiseBinsSec.get(i) > limit) {
                lastBad = i;
            }
        }
        if (lastBad == chatTtftP90AfterNoiseBinsSec.size() - 1) {
            return Double.POSITIVE_INFINITY;
        }
        return (lastBad + 1) * f.recoveryBinMs() / 1e3;
    }

    /** The client's own request or run timeout ended the request (not the router). */
    static boolean clientTimeout(RequestRecord r) {
        return r.error() != null && (r.error().startsWith("failed: TimeoutException") || r.error().startsWith("overall timeout"));
    }

    static boolean shed(RequestRecord r) {
        return r.status() == 429 || r.status() == 503;
    }

    static double simMs(long wallNanos, Frame f) {
        return wallNanos * f.speedup() / 1e6;
    }

    /** TTFT from the intended send time in simulated seconds; infinite when the request did not succeed. */
    static double ttftSec(RequestRecord r, Frame f) {
        if (!r.ok() || r.firstTokenNanos() < 0) {
            return Double.POSITIVE_INFINITY;
        }
        return (r.firstTokenNanos() - r.scheduledNanos()) * f.speedup() / 1e9;
    }

    private static double[] ttftsSec(List<RequestRecord> records, Frame f) {
        return records.stream().mapToDouble(r -> ttftSec(r, f)).toArray();
    }

    /** Nearest-rank percentile; NaN for no values. */
    static double percentile(double[] values, double q) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static boolean between(double v, double from, double to) {
        return v >= from && v < to;
    }

    private static List<RequestRecord> filter(List<RequestRecord> records, Predicate<RequestRecord> p) {
        return records.stream().filter(p).toList();
    }

    private static long count(List<RequestRecord> records, Predicate<RequestRecord> p) {
        return records.stream().filter(p).count();
    }

    /** Weighted shares and per-window fairness of the backlogged tenants of the fairness sub-scenario. */
    record Fairness(Map<String, Double> shares, Map<String, Double> targetShares, double maxShareErrorRelative,
            List<Double> jainPerWindow) {

        /**
         * Service per tenant = VTC's charge (uncached input + 0.1 x cached input + output) of its successful
         * requests, attributed to the window in which each ended; Jain's index over service / weight per
         * window of {@code windowMs} (simulated) lying wholly inside the run.
         */
        static Fairness of(List<RequestRecord> records, Map<String, Double> weights, double speedup, long durationMs,
                long windowMs) {
            int windows = (int) (durationMs / windowMs);
            Map<String, double[]> perWindow = new LinkedHashMap<>();
            weights.keySet().forEach(t -> perWindow.put(t, new double[windows]));
            for (RequestRecord r : records) {
                double[] w = perWindow.get(r.tag());
                if (w == null || !r.ok()) {
                    continue;
                }
                int window = (int) (r.endNanos() * speedup / 1e6 / windowMs);
                if (window < windows) {
                    w[window] += (r.promptTokens() - r.cachedTokens()) + 0.1 * r.cachedTokens() + r.outputTokens();
                }
            }
            List<Double> jain = new ArrayList<>();
            for (int i = 0; i < windows; i++) {
                double[] x = new double[weights.size()];
                int k = 0;
                for (Map.Entry<String, Double> e : weights.entrySet()) {
                    x[k++] = perWindow.get(e.getKey())[i] / e.getValue();
                }
                jain.add(jain(x));
            }
            Map<String, Double> totals = new LinkedHashMap<>();
            perWindow.forEach((t, w) -> totals.put(t, Arrays.stream(w).sum()));
            return fromTotals(totals, weights, jain);
        }

        /** Shares of {@code service} (e.g. the router's counters) against the weights, with the given Jain series. */
        static Fairness fromTotals(Map<String, Double> service, Map<String, Double> weights, List<Double> jain) {
            double sum = service.values().stream().mapToDouble(Double::doubleValue).sum();
            double weightSum = weights.values().stream().mapToDouble(Double::doubleValue).sum();
            Map<String, Double> shares = new LinkedHashMap<>();
            Map<String, Double> targets = new LinkedHashMap<>();
            double maxError = 0;
            for (Map.Entry<String, Double> e : weights.entrySet()) {
                double share = sum == 0 ? Double.NaN : service.getOrDefault(e.getKey(), 0.0) / sum;
                double target = e.getValue() / weightSum;
                shares.put(e.getKey(), share);
                targets.put(e.getKey(), target);
                maxError = Math.max(maxError, Math.abs(share / target - 1));
            }
            return new Fairness(shares, targets, sum == 0 ? Double.NaN : maxError, List.copyOf(jain));
        }

        /** Jain's fairness index (sum x)^2 / (n sum x^2); 1 when all are equal, NaN when all are 0. */
        static double jain(double[] x) {
            double sum = 0;
            double squares = 0;
            for (double v : x) {
                sum += v;
                squares += v * v;
            }
            return squares == 0 ? Double.NaN : sum * sum / (x.length * squares);
        }
    }
}
