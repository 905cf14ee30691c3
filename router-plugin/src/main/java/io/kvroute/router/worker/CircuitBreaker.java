package io.kvroute.router.worker;

import java.util.function.LongSupplier;

/**
 * A per-worker circuit breaker: CLOSED → OPEN after {@code failureThreshold} consecutive failures;
 * OPEN → HALF_OPEN once {@code openNanos} have passed (checked lazily when the breaker is asked);
 * HALF_OPEN → CLOSED after {@code successThreshold} consecutive successes, or back to OPEN on any
 * failure. A worker's 4xx answers are the client's fault and must not be reported here.
 *
 * <p>Pure state machine: the clock is injected. Thread-safe; every method is a short critical
 * section on this object and never calls out, so listeners are notified by the caller from the
 * returned transition.
 */
public final class CircuitBreaker {

    /** Breaker states, exported as {@code kvroute_worker_breaker_state} 0/1/2. */
    public enum State { CLOSED, OPEN, HALF_OPEN }

    /** A state change, or null when none happened. */
    public record Transition(State from, State to) {}

    private final int failureThreshold;
    private final int successThreshold;
    private final long openNanos;
    private final LongSupplier nanoClock;

    private State state = State.CLOSED; // guarded by this
    private int consecutiveFailures; // guarded by this
    private int consecutiveSuccesses; // guarded by this
    private long openedAtNanos; // guarded by this
    private boolean halfOpenUnreported; // guarded by this: the lazy OPEN -> HALF_OPEN move not yet taken by a caller

    public CircuitBreaker(int failureThreshold, int successThreshold, long openNanos, LongSupplier nanoClock) {
        if (failureThreshold < 1 || successThreshold < 1 || openNanos < 0) {
            throw new IllegalArgumentException("thresholds must be >= 1 and the open time >= 0");
        }
        this.failureThreshold = failureThreshold;
        this.successThreshold = successThreshold;
        this.openNanos = openNanos;
        this.nanoClock = nanoClock;
    }

    /** The current state, moving OPEN to HALF_OPEN when the cool-down has passed. */
    public synchronized State state() {
        maybeHalfOpen();
        return state;
    }

    /** True when traffic may go to the worker (CLOSED or HALF_OPEN). */
    public boolean allowsTraffic() {
        return state() != State.OPEN;
    }

    /** Records a success; returns the transition it caused, or null. */
    public synchronized Transition onSuccess() {
        maybeHalfOpen();
        consecutiveFailures = 0;
        if (state == State.HALF_OPEN) {
            consecutiveSuccesses++;
            if (consecutiveSuccesses >= successThreshold) {
                return move(State.CLOSED);
            }
        }
        return null;
    }

    /** Records a failure (connect error, timeout, reset, 5xx); returns the transition, or null. */
    public synchronized Transition onFailure() {
        maybeHalfOpen();
        consecutiveSuccesses = 0;
        if (state == State.HALF_OPEN) {
            return move(State.OPEN);
        }
        consecutiveFailures++;
        if (state == State.CLOSED && consecutiveFailures >= failureThreshold) {
            return move(State.OPEN);
        }
        return null;
    }

    /**
     * Returns the OPEN → HALF_OPEN transition once after it happened (lazily, inside any other
     * call), or null. Callers that report transitions poll this after every call, so the cool-down
     * ending is reported exactly once like every other transition.
     */
    public synchronized Transition takeHalfOpen() {
        maybeHalfOpen();
        if (!halfOpenUnreported) {
            return null;
        }
        halfOpenUnreported = false;
        return new Transition(State.OPEN, State.HALF_OPEN);
    }

    private void maybeHalfOpen() {
        if (state == State.OPEN && nanoClock.getAsLong() - openedAtNanos >= openNanos) {
            state = State.HALF_OPEN;
            consecutiveSuccesses = 0;
            halfOpenUnreported = true;
        }
    }

    private Transition move(State to) {
        State from = state;
        state = to;
        consecutiveFailures = 0;
        consecutiveSuccesses = 0;
        if (to == State.OPEN) {
            openedAtNanos = nanoClock.getAsLong();
        }
        return new Transition(from, to);
    }
}
