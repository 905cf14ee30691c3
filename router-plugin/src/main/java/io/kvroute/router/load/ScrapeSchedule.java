package io.kvroute.router.load;

/**
 * When one worker's next {@code /metrics} scrape is due: every interval while scrapes succeed; after
 * {@code n} consecutive failures the interval doubles {@code n} times, capped at the maximum backoff,
 * so a dead or metric-less engine costs at most one request per backoff period. At most one scrape per
 * worker is in flight: a scrape still running when the next is due is not duplicated (which, with one
 * connection per destination, keeps a slow engine from stacking requests). Pure; times are nanos on the
 * caller's clock. Not thread-safe: the scraper confines each instance to its own guarded state.
 */
final class ScrapeSchedule {
    private final long intervalNanos;
    private final long maxBackoffNanos;
    private long nextDueNanos;
    private int consecutiveFailures;
    private boolean inFlight;

    ScrapeSchedule(long intervalNanos, long maxBackoffNanos, long nowNanos) {
        if (intervalNanos <= 0 || maxBackoffNanos < intervalNanos) {
            throw new IllegalArgumentException("interval " + intervalNanos + " ns, max backoff " + maxBackoffNanos + " ns");
        }
        this.intervalNanos = intervalNanos;
        this.maxBackoffNanos = maxBackoffNanos;
        this.nextDueNanos = nowNanos;
    }

    /** True (and marks a scrape in flight) when a scrape should start now. */
    boolean tryStart(long nowNanos) {
        if (inFlight || nowNanos - nextDueNanos < 0) {
            return false;
        }
        inFlight = true;
        return true;
    }

    /** The scrape started at {@code startedAtNanos} ended; schedules the next one. */
    void finish(long startedAtNanos, boolean ok) {
        inFlight = false;
        consecutiveFailures = ok ? 0 : Math.min(consecutiveFailures + 1, 62);
        nextDueNanos = startedAtNanos + delayNanos();
    }

    /** The wait before the next scrape after the current failure streak. */
    long delayNanos() {
        long d = intervalNanos;
        for (int i = 0; i < consecutiveFailures && d < maxBackoffNanos; i++) {
            d = d > maxBackoffNanos / 2 ? maxBackoffNanos : d * 2;
        }
        return Math.min(d, maxBackoffNanos);
    }

    int consecutiveFailures() {
        return consecutiveFailures;
    }

    long nextDueNanos() {
        return nextDueNanos;
    }
}
