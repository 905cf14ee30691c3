package io.kvroute.router.http;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests the router is serving now, and whether it is draining. Draining turns
 * {@code /readyz} to 503 and new inference requests to 503 at once; in-flight requests keep going
 * until they finish or the drain deadline aborts them with a clear error.
 */
public final class ActiveRequests {

    private final Set<Abortable> active = ConcurrentHashMap.newKeySet();
    private volatile boolean draining;

    public boolean draining() {
        return draining;
    }

    public void beginDrain() {
        draining = true;
    }

    public int size() {
        return active.size();
    }

    void add(Abortable dispatch) {
        active.add(dispatch);
    }

    void remove(Abortable dispatch) {
        active.remove(dispatch);
    }

    /**
     * Waits until every in-flight request finished or {@code deadlineNanos} (System.nanoTime)
     * passed, then aborts the rest with {@code reason}. Returns how many were aborted.
     */
    public int awaitThenAbort(long deadlineNanos, String reason) throws InterruptedException {
        while (!active.isEmpty() && System.nanoTime() < deadlineNanos) {
            Thread.sleep(20);
        }
        int aborted = 0;
        for (Abortable dispatch : active) {
            dispatch.abort(reason);
            aborted++;
        }
        long graceNanos = System.nanoTime() + 2_000_000_000L;
        while (!active.isEmpty() && System.nanoTime() < graceNanos) {
            Thread.sleep(10);
        }
        return aborted;
    }
}
