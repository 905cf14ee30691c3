package io.kvroute.router.dispatch;

import io.kvroute.router.metrics.RouterMetrics;

/** The outcome listener that feeds the request, duration, first-byte and PD segment meters. */
public final class MetricsOutcomes implements OutcomeListener {

    private final RouterMetrics metrics;

    public MetricsOutcomes(RouterMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void onOutcome(RequestOutcome outcome) {
        metrics.request(outcome.path(), outcome.status());
        metrics.duration(outcome.path(), outcome.label(), outcome.durationNanos());
        if (outcome.firstByteNanos() > 0 && outcome.failure() == null) {
            metrics.firstByte(outcome.path(), outcome.firstByteNanos());
        }
        if (outcome.segments() > 1) {
            metrics.pdSegments(outcome.path(), outcome.segments());
        }
    }
}
