package io.kvroute.router.dispatch;

/**
 * What to do after an attempt ended, as decided by {@link RetryRule}.
 *
 * @param action the step
 * @param delayNanos the backoff before a {@link Action#RETRY}, 0 otherwise
 */
public record Step(Action action, long delayNanos) {

    static final Step DONE = new Step(Action.DONE, 0);
    static final Step GIVE_UP = new Step(Action.GIVE_UP, 0);
    static final Step STOP = new Step(Action.STOP, 0);

    static Step retry(long delayNanos) {
        return new Step(Action.RETRY, delayNanos);
    }

    /** The kinds of step. */
    public enum Action {
        /** The attempt succeeded: finish the response. */
        DONE,
        /** Try again (possibly on other workers) after the delay. */
        RETRY,
        /** Stop retrying: relay the worker's answer or an error to the client. */
        GIVE_UP,
        /** The client is gone: end without writing anything. */
        STOP
    }
}
