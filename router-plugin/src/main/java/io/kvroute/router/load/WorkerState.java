package io.kvroute.router.load;

import java.util.List;

/**
 * Immutable per-worker entry of a {@link LoadTable}: the advertised endpoints, the dp size and the
 * latest sample per rank (null until the rank first reports) and where the samples come from (a
 * scraped worker has no endpoints). Replaced, never mutated, by the load-plane thread.
 */
record WorkerState(String workerId, List<String> endpoints, int dpSize, RankSample[] ranks, long missedReports,
                   LoadSource source) {

    static WorkerState empty(String workerId, List<String> endpoints, int dpSize) {
        return empty(workerId, endpoints, dpSize, LoadSource.LOADSTAT);
    }

    static WorkerState empty(String workerId, List<String> endpoints, int dpSize, LoadSource source) {
        return new WorkerState(workerId, List.copyOf(endpoints), dpSize, new RankSample[dpSize], 0, source);
    }

    /** Keyed by the report's own rank (tests; a single shared endpoint). */
    WorkerState withSample(RankSample sample, long newlyMissed) {
        return withSample(sample.report().attnDpRank(), sample, newlyMissed);
    }

    /** This state with {@code sample} as rank {@code rank}'s latest (the rank of the socket it came on). */
    WorkerState withSample(int rank, RankSample sample, long newlyMissed) {
        RankSample[] copy = ranks.clone();
        copy[rank] = sample;
        return new WorkerState(workerId, endpoints, dpSize, copy, missedReports + newlyMissed, source);
    }

    RankSample rank(int r) {
        return ranks[r];
    }

    /** Oldest arrival over all ranks, or {@code Long.MIN_VALUE} if some rank never reported. */
    long oldestReceivedAtNanos() {
        long oldest = Long.MAX_VALUE;
        for (RankSample s : ranks) {
            if (s == null) {
                return Long.MIN_VALUE;
            }
            oldest = Math.min(oldest, s.receivedAtNanos());
        }
        return oldest;
    }
}
