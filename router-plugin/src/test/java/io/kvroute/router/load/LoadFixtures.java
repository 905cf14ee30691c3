package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Builds tables by hand for the pure (socket-free) tests. */
final class LoadFixtures {
    private LoadFixtures() {}

    static LoadReport base(int rank, int running, int waiting, long tokens, long max) {
        return new LoadReport(0, running, waiting, tokens, max, rank, false, 0, 0, 0, 0, 0);
    }

    static LoadReport ext(int rank, int running, int waiting, long uncached, long prefilledTokens, long busyUs) {
        return new LoadReport(0, running, waiting, 1000, 10_000, rank, true, uncached, 1200, 64, prefilledTokens, busyUs);
    }

    static WorkerState worker(String id, int dpSize, RankSample... samples) {
        WorkerState w = WorkerState.empty(id, List.of("tcp://" + id + ":5560"), dpSize);
        for (RankSample s : samples) {
            w = w.withSample(s, 0);
        }
        return w;
    }

    static RankSample at(LoadReport r, long receivedAtNanos) {
        return new RankSample(r, receivedAtNanos, Double.NaN);
    }

    static EngineLoadSnapshot snapshot(long nowNanos, DispatchLog log, WorkerState... workers) {
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < workers.length; i++) {
            index.put(workers[i].workerId(), i);
        }
        return new EngineLoadSnapshot(new LoadTable(1, Map.copyOf(index), workers.clone()), nowNanos,
                5_000_000_000L, log);
    }
}
