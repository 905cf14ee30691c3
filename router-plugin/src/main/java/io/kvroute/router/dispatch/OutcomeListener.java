package io.kvroute.router.dispatch;

/** The one place per-request outcomes are reported (metrics today; an access log or tracing may add a listener). */
@FunctionalInterface
public interface OutcomeListener {

    /** Called once per client request, on the thread of its terminal transition; must not block. */
    void onOutcome(RequestOutcome outcome);

    /** Both listeners, in order. */
    default OutcomeListener andThen(OutcomeListener next) {
        return outcome -> {
            onOutcome(outcome);
            next.onOutcome(outcome);
        };
    }
}
