package io.kvroute.router.ingress;

import io.kvroute.router.dispatch.Abortable;
import io.kvroute.router.dispatch.InFlightRequests;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests the router is serving now, and whether it is draining. Draining turns
 * {@code /readyz} to 503 and new inference requests to 503 at once; in-flight requests keep going
 * until they finish or the drain deadline aborts them with a clear error.
 */
public final class ActiveRequests implements InFlightRequests {

    private final Set<Abortable> active = ConcurrentHashMap.newKeySet();
    /** The router's clock, in which drain deadlines are stated. */
    private final java.util.function.LongSupplier nanoClock;
    private final java.util.concurrent.CompletableFuture<Void> drained = new java.util.concurrent.CompletableFuture<>();
    private volatile boolean draining;

    public ActiveRequests(java.util.function.LongSupplier nanoClock) {
        this.nanoClock = java.util.Objects.requireNonNull(nanoClock, "nanoClock");
    }

    public boolean draining() {
        return draining;
    }

    public void beginDrain() {
        draining = true;
        completeIfDrained();
    }

    /** Completes once draining has begun and no request is in flight. */
    public java.util.concurrent.CompletableFuture<Void> drained() {
        return drained;
    }

    private void completeIfDrained() {
        if (draining && active.isEmpty()) {
            drained.complete(null);
        }
    }

    public int size() {
        return active.size();
    }

    @Override
    public void add(Abortable dispatch) {
        active.add(dispatch);
    }

    @Override
    public void remove(Abortable dispatch) {
        active.remove(dispatch);
        completeIfDrained();
    }

    /**
     * Waits until every in-flight request finished or {@code deadlineNanos} (the router's clock)
     * passed, then aborts the rest with {@code reason}. Returns how many were aborted.
     */
    public int awaitThenAbort(long deadlineNanos, String reason) throws InterruptedException {
        if (awaitDrained(deadlineNanos - nanoClock.getAsLong()) && active.isEmpty()) {
            return 0;
        }
        int aborted = 0;
        for (Abortable dispatch : active) {
            dispatch.abort(reason);
            aborted++;
        }
        awaitDrained(ABORT_GRACE_NANOS);
        return aborted;
    }

    /** How long aborted requests get to write their error and leave. */
    private static final long ABORT_GRACE_NANOS = 2_000_000_000L;

    private boolean awaitDrained(long timeoutNanos) throws InterruptedException {
        try {
            drained.get(Math.max(0, timeoutNanos), java.util.concurrent.TimeUnit.NANOSECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("the drain future never fails", e);
        }
    }
}
