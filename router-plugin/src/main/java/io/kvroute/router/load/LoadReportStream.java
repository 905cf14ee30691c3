package io.kvroute.router.load;

import io.kvroute.protocol.LoadStatWire;
import io.kvroute.protocol.LoadReport;
import java.util.Arrays;

/**
 * The LoadStat reports of one subscribed worker as a pure state machine (no sockets, no clock of its
 * own), the load plane's counterpart of {@code kvevents.PublisherStream}: per rank it tracks the last
 * {@code seq} and turns each report into the worker's next {@link WorkerState}.
 *
 * <p>Per rank: the first report after a subscription is never a gap; a {@code seq} above the expected
 * one counts the reports missed in between; a {@code seq} below it means the publisher restarted (its
 * counters and {@code seq} started over), so the rank's previous sample is forgotten and the throughput
 * estimate starts afresh instead of counting a gap (a publisher numbers its reports from its own
 * start). {@code seq} -1 marks no report (the end of a replay) and is ignored. A rank outside the
 * worker's dp size is refused. A report whose per-worker sums overflow an int is applied with the sums
 * clamped, and flagged.
 *
 * <p>Not thread-safe: owned by the load-plane thread.
 */
final class LoadReportStream {

    /** What one report did. */
    enum Verdict {
        /** Applied in order (or the first after a subscription). */
        APPLIED,
        /** Applied after a gap of {@link Step#missed} reports. */
        GAP,
        /** Applied as the first report of a restarted publisher. */
        RESTART,
        /** Not a report (seq -1): nothing changes. */
        IGNORED,
        /** The rank is outside the worker's dp size: nothing changes. */
        RANK_OUT_OF_RANGE
    }

    /**
     * @param verdict what happened
     * @param next the worker's state after the report (the same state unless applied)
     * @param missed reports missed before this one (0 unless {@link Verdict#GAP})
     * @param sumsOverflow the applied state's per-worker sums overflow an int (they read clamped)
     */
    record Step(Verdict verdict, WorkerState next, long missed, boolean sumsOverflow) {}

    private final long[] lastSeq;
    private final boolean[] seen;

    LoadReportStream(int dpSize) {
        this.lastSeq = new long[dpSize];
        this.seen = new boolean[dpSize];
    }

    /** Applies {@code report}, received on {@code rank} at {@code nowNanos} (the plane's injected clock). */
    Step apply(WorkerState state, int rank, LoadReport report, long nowNanos) {
        if (report.seq() == LoadStatWire.END_SEQ) {
            return new Step(Verdict.IGNORED, state, 0, false);
        }
        if (rank < 0 || rank >= state.dpSize() || rank >= seen.length) {
            return new Step(Verdict.RANK_OUT_OF_RANGE, state, 0, false);
        }
        long seq = report.seq();
        Verdict verdict = Verdict.APPLIED;
        long missed = 0;
        RankSample prev = state.rank(rank);
        if (seen[rank]) {
            long expected = lastSeq[rank] + 1;
            if (seq > expected) {
                verdict = Verdict.GAP;
                missed = seq - expected;
            } else if (seq < expected) {
                verdict = Verdict.RESTART;
                prev = null; // publisher restarted: its counters and seq started over
            }
        }
        seen[rank] = true;
        lastSeq[rank] = seq;
        WorkerState next = state.withSample(rank, RankSample.next(prev, report, nowNanos), missed);
        return new Step(verdict, next, missed, WorkerLoad.sumsOverflow(next));
    }

    /** A new connection: its first report on each rank is not a gap. */
    void onResubscribed() {
        Arrays.fill(seen, false);
    }
}
