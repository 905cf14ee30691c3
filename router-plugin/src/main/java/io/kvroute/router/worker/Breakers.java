package io.kvroute.router.worker;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * One {@link CircuitBreaker} per worker, created on first use, plus a transition listener for
 * metrics and logs. When disabled every worker always allows traffic and nothing is recorded.
 */
public final class Breakers {

    private final boolean enabled;
    private final int failureThreshold;
    private final int successThreshold;
    private final long openNanos;
    private final LongSupplier nanoClock;
    private final BiConsumer<String, CircuitBreaker.Transition> onTransition;
    private final Map<String, CircuitBreaker> byWorker = new ConcurrentHashMap<>();

    public Breakers(boolean enabled, int failureThreshold, int successThreshold, long openNanos, LongSupplier nanoClock,
            BiConsumer<String, CircuitBreaker.Transition> onTransition) {
        this.enabled = enabled;
        this.failureThreshold = failureThreshold;
        this.successThreshold = successThreshold;
        this.openNanos = openNanos;
        this.nanoClock = nanoClock;
        this.onTransition = onTransition;
    }

    public CircuitBreaker of(String workerId) {
        return byWorker.computeIfAbsent(workerId,
                id -> new CircuitBreaker(failureThreshold, successThreshold, openNanos, nanoClock));
    }

    public boolean allowsTraffic(String workerId) {
        return !enabled || of(workerId).allowsTraffic();
    }

    public CircuitBreaker.State state(String workerId) {
        return enabled ? of(workerId).state() : CircuitBreaker.State.CLOSED;
    }

    public void onSuccess(String workerId) {
        if (enabled) {
            fire(workerId, of(workerId).onSuccess());
        }
    }

    public void onFailure(String workerId) {
        if (enabled) {
            fire(workerId, of(workerId).onFailure());
        }
    }

    public void forget(String workerId) {
        byWorker.remove(workerId);
    }

    private void fire(String workerId, CircuitBreaker.Transition transition) {
        if (transition != null) {
            onTransition.accept(workerId, transition);
        }
    }
}
