package io.kvroute.router.lora;

import static java.util.Objects.requireNonNull;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * When the router reads a healthy worker's model list ({@code /v1/models}) again after discovery. A worker
 * known to serve adapters (it listed some, or its load scrape shows LoRA slots) is read on every health probe,
 * as before; any other worker at most once per {@code intervalNanos} ({@code --lora-models-refresh-secs}), so
 * an adapter loaded onto it out of band (an operator's {@code load_lora_adapter}, another router replica) is
 * seen without a restart. An interval of 0 never re-reads such workers.
 *
 * <p>Plain Java: time comes from the injected clock. Thread-safe without a lock (a concurrent map of the last
 * read per worker, advanced by compare-and-set); a worker's entry is dropped when it is read as serving
 * adapters, so the map holds at most one entry per worker without adapters ever seen.
 */
public final class ModelListRefresh {

    private final long intervalNanos;
    private final LongSupplier nanoClock;
    /** When each worker without adapters was last read (or first asked about: discovery had just read it). */
    private final Map<String, Long> lastReadNanos = new ConcurrentHashMap<>();

    /**
     * @param intervalNanos how often a worker without adapters is read again; 0 = never
     * @param nanoClock a monotonic clock in nanoseconds
     */
    public ModelListRefresh(long intervalNanos, LongSupplier nanoClock) {
        if (intervalNanos < 0) {
            throw new IllegalArgumentException("intervalNanos must be >= 0 (got " + intervalNanos + ")");
        }
        this.intervalNanos = intervalNanos;
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
    }

    /**
     * Whether the health probe that found {@code workerId} healthy should read its model list now.
     *
     * @param servesAdapters the worker is known to serve adapters
     */
    public boolean due(String workerId, boolean servesAdapters) {
        if (servesAdapters) {
            lastReadNanos.remove(workerId);
            return true;
        }
        if (intervalNanos == 0) {
            return false;
        }
        long now = nanoClock.getAsLong();
        Long last = lastReadNanos.putIfAbsent(workerId, now);
        if (last == null) {
            return false; // first probe after discovery, which read the list just now
        }
        return now - last >= intervalNanos && lastReadNanos.replace(workerId, last, now);
    }
}
