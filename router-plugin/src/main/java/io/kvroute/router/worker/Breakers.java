package io.kvroute.router.worker;

import io.kvroute.router.config.BreakerSettings;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * One {@link CircuitBreaker} per worker, created on first use, plus a transition listener for
 * metrics and logs. Every transition is reported exactly once, the lazy OPEN → HALF_OPEN one
 * included, and always outside the breaker's lock. When disabled every worker always allows traffic and nothing is recorded.
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

    /** The breakers configured by {@code --cb-*} and {@code --disable-circuit-breaker}. */
    public Breakers(BreakerSettings settings, LongSupplier nanoClock, BiConsumer<String, CircuitBreaker.Transition> onTransition) {
        this(!settings.disabled(), settings.failureThreshold(), settings.successThreshold(), settings.openNanos(),
                nanoClock, onTransition);
    }

    public CircuitBreaker of(String workerId) {
        return byWorker.computeIfAbsent(workerId,
                id -> new CircuitBreaker(failureThreshold, successThreshold, openNanos, nanoClock));
    }

    public boolean allowsTraffic(String workerId) {
        return state(workerId) != CircuitBreaker.State.OPEN;
    }

    public CircuitBreaker.State state(String workerId) {
        if (!enabled) {
            return CircuitBreaker.State.CLOSED;
        }
        CircuitBreaker breaker = of(workerId);
        CircuitBreaker.State state = breaker.state();
        fire(workerId, breaker.takeHalfOpen());
        return state;
    }

    public void onSuccess(String workerId) {
        if (enabled) {
            CircuitBreaker breaker = of(workerId);
            CircuitBreaker.Transition transition = breaker.onSuccess();
            fire(workerId, breaker.takeHalfOpen());
            fire(workerId, transition);
        }
    }

    public void onFailure(String workerId) {
        if (enabled) {
            CircuitBreaker breaker = of(workerId);
            CircuitBreaker.Transition transition = breaker.onFailure();
            fire(workerId, breaker.takeHalfOpen());
            fire(workerId, transition);
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
