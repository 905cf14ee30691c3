package io.kvroute.router.worker;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Router-local in-flight request counts per worker: the load signal every router has even when no
 * engine reports arrive. Thread-safe and lock-free; a count never goes below zero because every
 * {@link #release} pairs with one {@link #acquire} in the dispatch path's finally block.
 */
public final class InFlightCounters {

    private final ConcurrentHashMap<String, AtomicInteger> countsByWorker = new ConcurrentHashMap<>();

    public void acquire(String workerId) {
        countsByWorker.computeIfAbsent(workerId, k -> new AtomicInteger()).incrementAndGet();
    }

    public void release(String workerId) {
        AtomicInteger count = countsByWorker.get(workerId);
        if (count != null) {
            count.updateAndGet(v -> Math.max(0, v - 1));
        }
    }

    public int get(String workerId) {
        AtomicInteger count = countsByWorker.get(workerId);
        return count == null ? 0 : count.get();
    }

    /** The live counter for a gauge; created on first use. */
    public AtomicInteger counter(String workerId) {
        return countsByWorker.computeIfAbsent(workerId, k -> new AtomicInteger());
    }
}
