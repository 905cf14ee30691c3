package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import java.util.OptionalDouble;

/**
 * A worker's fresh load, summed over all its dp ranks, as one request sees it.
 *
 * <p>{@code numWaitingReqs} is the engine-reported sum PLUS {@code routerDispatchesSinceCapture}:
 * the dispatches this router recorded in its {@link DispatchLog} after {@code capturedAtNanos}
 * (the oldest rank's arrival time) and up to the snapshot's capture instant. Nothing else is
 * adjusted: running requests, tokens and the estimated queue time are the engine's figures.
 * Extension-only fields are 0 when {@code hasExtension} is false ({@code numTotalTokens} then falls
 * back to {@code numTokens}).
 *
 * @param estimatedPrefillQueueMs pooled over ranks: sum of waiting uncached tokens / sum of rank
 *        prefill throughputs; 0 when nothing waits; empty when a rank with waiting work has no
 *        throughput estimate yet (or there is no extension)
 * @param capturedAtNanos the oldest rank's arrival time on the router's clock
 */
public record WorkerLoad(int numRunningReqs, int numWaitingReqs, long numTokens, long maxTotalNumTokens,
                         long numTotalTokens, int maxRunningRequests, long numWaitingUncachedTokens,
                         OptionalDouble estimatedPrefillQueueMs, long capturedAtNanos,
                         boolean hasExtension, int routerDispatchesSinceCapture) {

    /** KV usage fraction {@code numTokens / maxTotalNumTokens}, empty when the capacity is unknown (0). */
    public OptionalDouble kvUsageFraction() {
        return maxTotalNumTokens <= 0 ? OptionalDouble.empty() : OptionalDouble.of((double) numTokens / maxTotalNumTokens);
    }

    /** The engine-reported waiting count, without the router's own recent dispatches. */
    public int engineNumWaitingReqs() {
        return numWaitingReqs - routerDispatchesSinceCapture;
    }

    /**
     * Sums the ranks of {@code w}; the caller has checked that every rank is present. Sums saturate
     * (int at {@code Integer.MAX_VALUE}, long at {@code Long.MAX_VALUE}) instead of wrapping: an
     * absurd report must not make a worker look idle ({@link #sumsOverflow} tells the plane to
     * count it as malformed).
     */
    static WorkerLoad aggregate(WorkerState w, int dispatches) {
        long running = 0;
        long waiting = 0;
        long tokens = 0;
        long maxTotal = 0;
        long totalTokens = 0;
        long maxRunning = 0;
        long uncached = 0;
        double tput = 0;
        boolean allExt = true;
        boolean estimable = true;
        boolean anyMaxUnknown = false;
        long oldest = Long.MAX_VALUE;
        for (RankSample s : w.ranks()) {
            LoadReport r = s.report();
            running += r.numRunningReqs(); // int fields: a long sum of at most 1024 ranks cannot wrap
            waiting += r.numWaitingReqs();
            tokens = satAdd(tokens, r.numTokens());
            anyMaxUnknown |= r.maxTotalNumTokens() == 0;
            maxTotal = satAdd(maxTotal, r.maxTotalNumTokens());
            oldest = Math.min(oldest, s.receivedAtNanos());
            if (r.hasExtension()) {
                totalTokens = satAdd(totalTokens, r.numTotalTokens());
                maxRunning += r.maxRunningRequests();
                uncached = satAdd(uncached, r.numWaitingUncachedTokens());
                if (!Double.isNaN(s.prefillTokensPerUs())) {
                    tput += s.prefillTokensPerUs();
                } else if (r.numWaitingUncachedTokens() > 0) {
                    estimable = false;
                }
            } else {
                allExt = false;
                totalTokens = satAdd(totalTokens, r.numTokens());
            }
        }
        OptionalDouble est;
        if (!allExt || !estimable) {
            est = OptionalDouble.empty();
        } else if (uncached == 0) {
            est = OptionalDouble.of(0.0);
        } else {
            est = tput > 0 ? OptionalDouble.of(uncached / tput / 1000.0) : OptionalDouble.empty();
        }
        return new WorkerLoad(sat(running), sat(waiting + dispatches), tokens, anyMaxUnknown ? 0 : maxTotal,
                totalTokens, allExt ? sat(maxRunning) : 0, allExt ? uncached : 0, est, oldest, allExt, dispatches);
    }

    /** True when some sum over the present ranks of {@code w} does not fit its field and would be clamped. */
    static boolean sumsOverflow(WorkerState w) {
        long running = 0;
        long waiting = 0;
        long maxRunning = 0;
        long tokens = 0;
        long maxTotal = 0;
        long totalTokens = 0;
        long uncached = 0;
        for (RankSample s : w.ranks()) {
            if (s == null) {
                continue;
            }
            LoadReport r = s.report();
            running += r.numRunningReqs();
            waiting += r.numWaitingReqs();
            maxRunning += r.maxRunningRequests();
            tokens = satAdd(tokens, r.numTokens());
            maxTotal = satAdd(maxTotal, r.maxTotalNumTokens());
            totalTokens = satAdd(totalTokens, r.hasExtension() ? r.numTotalTokens() : r.numTokens());
            uncached = satAdd(uncached, r.numWaitingUncachedTokens());
        }
        return running > Integer.MAX_VALUE || waiting > Integer.MAX_VALUE || maxRunning > Integer.MAX_VALUE
                || tokens == Long.MAX_VALUE || maxTotal == Long.MAX_VALUE || totalTokens == Long.MAX_VALUE
                || uncached == Long.MAX_VALUE;
    }

    private static int sat(long v) {
        return (int) Math.min(Integer.MAX_VALUE, v);
    }

    /** Saturating addition of two non-negative longs. */
    private static long satAdd(long a, long b) {
        long r = a + b;
        return r < 0 ? Long.MAX_VALUE : r;
    }
}
