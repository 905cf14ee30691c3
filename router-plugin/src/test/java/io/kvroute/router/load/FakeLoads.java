package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Test-only builder of {@link EngineLoadSnapshot}s for tests outside this package (policy tests):
 * fresh workers with the extension fields, stale workers, scraped (/metrics) workers. Single-rank workers.
 */
public final class FakeLoads {
    /** The snapshot's capture instant; fresh samples arrive 1 s before, stale ones 10 s before. */
    public static final long NOW_NANOS = 100_000_000_000L;
    private static final long FRESHNESS_NANOS = 5_000_000_000L;

    private final List<WorkerState> workers = new ArrayList<>();

    public static FakeLoads builder() {
        return new FakeLoads();
    }

    /** A fresh worker with generous capacity and no waiting uncached tokens. */
    public FakeLoads fresh(String id, int running, int waiting) {
        return fresh(id, running, waiting, 0, 1000, 1_000_000, 256, Double.NaN);
    }

    /**
     * A fresh worker reporting the extension.
     *
     * @param uncachedTokens num_waiting_uncached_tokens
     * @param totalTokens num_total_tokens (and num_tokens)
     * @param maxTotalTokens max_total_num_tokens, 0 = unknown
     * @param maxRunning max_running_requests, 0 = unknown
     * @param prefillTokensPerUs throughput for the ms estimate, NaN = none
     */
    public FakeLoads fresh(String id, int running, int waiting, long uncachedTokens, long totalTokens,
                           long maxTotalTokens, int maxRunning, double prefillTokensPerUs) {
        LoadReport r = new LoadReport(0, running, waiting, totalTokens, maxTotalTokens, 0, true, uncachedTokens,
                totalTokens, maxRunning, 0, 0);
        return add(id, new RankSample(r, NOW_NANOS - 1_000_000_000L, prefillTokensPerUs));
    }

    /** A worker whose only report is older than the freshness window. */
    public FakeLoads stale(String id, int waiting) {
        LoadReport r = new LoadReport(0, 0, waiting, 0, 0, 0, true, 0, 0, 0, 0, 0);
        return add(id, new RankSample(r, NOW_NANOS - 10_000_000_000L, Double.NaN));
    }

    /** A worker whose load is scraped from /metrics, read 100 ms before the capture instant (fresh). */
    public FakeLoads freshScraped(String id, int running, int waiting) {
        LoadReport r = new LoadReport(1, running, waiting, 0, 0, 0, false, 0, 0, 0, 0, 0);
        return addScraped(id, new RankSample(r, NOW_NANOS - 100_000_000L, Double.NaN));
    }

    /** A scraped worker whose last reading is older than the default staleness bound (1 s). */
    public FakeLoads staleScraped(String id, int waiting) {
        LoadReport r = new LoadReport(1, 0, waiting, 0, 0, 0, false, 0, 0, 0, 0, 0);
        return addScraped(id, new RankSample(r, NOW_NANOS - 2_000_000_000L, Double.NaN));
    }

    public EngineLoadSnapshot snapshot() {
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < workers.size(); i++) {
            index.put(workers.get(i).workerId(), i);
        }
        return new EngineLoadSnapshot(new LoadTable(1, Map.copyOf(index), workers.toArray(WorkerState[]::new)),
                NOW_NANOS, FRESHNESS_NANOS, new DispatchLog());
    }

    private FakeLoads addScraped(String id, RankSample sample) {
        workers.add(WorkerState.empty(id, List.of(), 1, LoadSource.METRICS).withSample(sample, 0));
        return this;
    }

    private FakeLoads add(String id, RankSample sample) {
        workers.add(WorkerState.empty(id, List.of("tcp://" + id + ":5560"), 1).withSample(sample, 0));
        return this;
    }
}
