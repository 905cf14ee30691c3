package io.kvroute.mock.engine;

import static java.util.Objects.requireNonNull;

/**
 * The mock engine's step loop driven by the caller instead of an engine thread, for discrete-event
 * simulation: the caller sets the injected {@link EngineClock} to the simulated instant and calls
 * {@link #step}, which runs one {@link EngineCore#runOnce} (the same admission, scheduler plugin
 * strategies, KV pool, prefix cache and time model as {@link ScheduledEngine}); the step's
 * "execution" is the clock's {@code sleepNanos}, which on a virtual clock only advances it, so the
 * sink callbacks of that step fire with the clock at the step's end.
 *
 * <p>Threading: not thread-safe; one simulation thread calls everything.
 */
public final class SteppedEngine {

    private final EngineCore core;

    public SteppedEngine(EngineConfig config, EngineClock clock) {
        this.core = new EngineCore(requireNonNull(config, "config"), requireNonNull(clock, "clock"));
    }

    /** Reports the prefix cache's pages as KV events; call before the first request. */
    public void setCacheEventSink(CacheEventSink sink) {
        core.setCacheEventSink(sink);
    }

    /** Queues a request; the next {@link #step} admits it. */
    public void submit(EngineRequest request, TokenSink sink) {
        core.submit(request, sink);
    }

    /**
     * Runs one engine iteration at the clock's current instant.
     *
     * @return true when a step executed (the clock advanced by its duration), false when nothing was runnable
     */
    public boolean step() {
        try {
            return core.runOnce();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("a virtual clock must not block", e);
        }
    }

    /** True while requests wait for admission, run, or sit in the inbox. */
    public boolean hasWork() {
        return core.hasWork();
    }

    public EngineStats stats() {
        return core.stats();
    }
}
