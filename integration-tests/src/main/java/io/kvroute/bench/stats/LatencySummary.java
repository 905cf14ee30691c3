package io.kvroute.bench.stats;

import io.kvroute.bench.client.RequestRecord;
import java.util.Collection;

/**
 * The per-group latency block ("M" in the summary JSON), in simulated milliseconds (wall time
 * multiplied by the run's time scale) over successful requests only. NaN means "no sample".
 */
public record LatencySummary(
        double ttftP50Ms,
        double ttftP95Ms,
        double ttftP99Ms,
        double tpotP50Ms,
        double e2eP50Ms,
        double e2eP95Ms,
        int count) {

    public static LatencySummary of(Collection<RequestRecord> records, double timeScale) {
        double nanosToSimMs = timeScale / 1_000_000.0;
        LatencyStats ttft = LatencyStats.of(records.stream().filter(RequestRecord::ok)
                .mapToDouble(r -> r.ttftNanos() * nanosToSimMs).toArray());
        LatencyStats tpot = LatencyStats.of(records.stream().filter(RequestRecord::ok)
                .mapToDouble(r -> r.tpotNanos() * nanosToSimMs).toArray());
        LatencyStats e2e = LatencyStats.of(records.stream().filter(RequestRecord::ok)
                .mapToDouble(r -> r.e2eNanos() * nanosToSimMs).toArray());
        int count = (int) records.stream().filter(RequestRecord::ok).count();
        return new LatencySummary(ttft.p50(), ttft.p95(), ttft.p99(), tpot.p50(), e2e.p50(), e2e.p95(), count);
    }
}
