package io.kvroute.scheduler.report;

import io.kvroute.protocol.LoadStat;

/**
 * Decides, for one rank, whether the stat observed after an engine step is published.
 *
 * <p>Rule (SGLang's load publisher cadence): the first stat is always sent; after that a stat is
 * sent only when at least {@code everySteps} steps have passed since the last send AND either a
 * value changed or the last send is at least {@code resendIntervalNanos} old. So a busy engine sends
 * at most once every N steps, a changed value goes out at the first step N steps after the last
 * send, and an unchanged stat is re-sent at most once per interval (a heartbeat that keeps the
 * router's freshness window satisfied while the engine keeps stepping). An engine that stops calling
 * {@code onStep} stops publishing, so a hung engine goes stale at the router instead of looking idle.
 *
 * <p>Public for simulations that publish reports themselves at simulated instants (the bench's
 * virtual-time fleet) and must follow the real cadence: they call {@link #onStep} where
 * {@link LoadPublisher#onStep} would be called.
 *
 * <p>Not thread-safe: calls for one rank are serialized by the caller (the engine thread).
 */
public final class PublishSchedule {
    private final int everySteps;
    private final long resendIntervalNanos;
    private LoadStat lastSent;
    private long lastSentNanos;
    private int stepsSinceSend;

    public PublishSchedule(int everySteps, long resendIntervalNanos) {
        if (everySteps < 1) {
            throw new IllegalArgumentException("everySteps must be at least 1, got " + everySteps);
        }
        if (resendIntervalNanos < 0) {
            throw new IllegalArgumentException("resendIntervalNanos must be >= 0, got " + resendIntervalNanos);
        }
        this.everySteps = everySteps;
        this.resendIntervalNanos = resendIntervalNanos;
    }

    /** Records one step and returns true when {@code stat} must be sent now. */
    public boolean onStep(LoadStat stat, long nowNanos) {
        if (lastSent == null) {
            return markSent(stat, nowNanos);
        }
        if (stepsSinceSend < Integer.MAX_VALUE) {
            stepsSinceSend++;
        }
        if (stepsSinceSend < everySteps) {
            return false;
        }
        if (!stat.equals(lastSent) || nowNanos - lastSentNanos >= resendIntervalNanos) {
            return markSent(stat, nowNanos);
        }
        return false;
    }

    private boolean markSent(LoadStat stat, long nowNanos) {
        lastSent = stat;
        lastSentNanos = nowNanos;
        stepsSinceSend = 0;
        return true;
    }
}
