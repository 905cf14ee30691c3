package io.kvroute.bench.trace;

import io.kvroute.bench.report.Charts;
import io.kvroute.bench.stats.LatencyStats;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One arm's figures on a trace replay, in simulated (trace) milliseconds: TTFT and end-to-end
 * latency timed from the intended send instant, the share of prompt tokens the engines served from
 * their prefix caches, throughput, and load imbalance = max / mean over workers of the prefill tokens
 * each one computed.
 *
 * @param decisionMicros mean router decision cost per request, or NaN when not measured (real time)
 * @param ttftOverTime mean TTFT (s) per {@link #TIME_BUCKET_SECS} of trace time, for the plot
 */
record ArmSummary(String arm, int requests, int failed, long promptTokens, long cachedTokens, double ttftMeanMs,
        double ttftP50Ms, double ttftP99Ms, double e2eMeanMs, double e2eP99Ms, double requestsPerSec,
        double outputTokensPerSec, double imbalance, double decisionMicros, List<Charts.Point> ttftOverTime) {

    /** Plot resolution: the trace arrives on a ~3 s grid, 30 s buckets smooth its bursts. */
    static final double TIME_BUCKET_SECS = 30;

    double cacheServedFraction() {
        return promptTokens == 0 ? Double.NaN : (double) cachedTokens / promptTokens;
    }

    /**
     * One finished (or failed) request: its arrival in trace time (ms), TTFT and end-to-end latency
     * from the intended send instant (engine ms), its token counts.
     */
    record Outcome(double traceTimeMs, double ttftMs, double e2eMs, long promptTokens, long cachedTokens,
            long outputTokens, boolean ok) {}

    /** @param spanMs the measured run's duration, for throughput (wall ms in real time, simulated in virtual time) */
    static ArmSummary of(String arm, List<Outcome> outcomes, double spanMs, double[] perWorkerPrefillTokens,
            double decisionMicros) {
        List<Double> ttft = new ArrayList<>();
        List<Double> e2e = new ArrayList<>();
        long prompt = 0;
        long cached = 0;
        long output = 0;
        int failed = 0;
        Map<Long, double[]> buckets = new TreeMap<>();
        for (Outcome o : outcomes) {
            if (!o.ok()) {
                failed++;
                continue;
            }
            double t = o.ttftMs();
            ttft.add(t);
            e2e.add(o.e2eMs());
            prompt += o.promptTokens();
            cached += o.cachedTokens();
            output += o.outputTokens();
            double[] b = buckets.computeIfAbsent((long) (o.traceTimeMs() / 1000 / TIME_BUCKET_SECS), k -> new double[2]);
            b[0] += t / 1000;
            b[1]++;
        }
        List<Charts.Point> series = new ArrayList<>();
        buckets.forEach((k, b) -> series.add(new Charts.Point((k + 0.5) * TIME_BUCKET_SECS, b[0] / b[1])));
        LatencyStats ttftStats = LatencyStats.of(ttft);
        LatencyStats e2eStats = LatencyStats.of(e2e);
        double seconds = spanMs / 1000;
        return new ArmSummary(arm, outcomes.size(), failed, prompt, cached, ttftStats.mean(), ttftStats.p50(),
                ttftStats.p99(), e2eStats.mean(), e2eStats.p99(), (outcomes.size() - failed) / seconds, output / seconds,
                imbalance(perWorkerPrefillTokens), decisionMicros, series);
    }

    /** max / mean; NaN for an empty or all-zero fleet. */
    static double imbalance(double[] perWorker) {
        double max = 0;
        double sum = 0;
        for (double v : perWorker) {
            max = Math.max(max, v);
            sum += v;
        }
        return sum <= 0 ? Double.NaN : max / (sum / perWorker.length);
    }
}
