package io.kvroute.router.lora;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Single flight per (worker, adapter): while one load of an adapter onto a worker runs, every other request
 * that needs the same load waits for it instead of sending another. A finished load (success or failure)
 * leaves the table, so a later request after a failure tries again.
 *
 * <p>Threading: thread-safe and lock-free apart from the map's own bins; the load is started outside any
 * map operation (the starter's future is registered first, then the load is called), so no I/O is started
 * while a bin is locked.
 */
final class LoadFlights {

    private record Key(String workerId, String adapter) {}

    private final Map<Key, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();

    /** The running load of {@code adapter} onto the worker, or a new one started with {@code start}. */
    CompletableFuture<Void> join(String workerId, String adapter, Supplier<CompletableFuture<Void>> start) {
        Key key = new Key(workerId, adapter);
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> running = inFlight.putIfAbsent(key, mine);
        if (running != null) {
            return running;
        }
        CompletableFuture<Void> load;
        try {
            load = start.get();
        } catch (RuntimeException e) {
            load = CompletableFuture.failedFuture(e);
        }
        load.whenComplete((ok, failure) -> {
            inFlight.remove(key, mine); // before completing: a waiter that retries after a failure starts afresh
            if (failure != null) {
                mine.completeExceptionally(failure);
            } else {
                mine.complete(null);
            }
        });
        return mine;
    }

    /** Loads running now (for tests and metrics). */
    int size() {
        return inFlight.size();
    }
}
