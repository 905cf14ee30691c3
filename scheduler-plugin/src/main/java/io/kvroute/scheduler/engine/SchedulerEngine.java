package io.kvroute.scheduler.engine;

import io.kvroute.protocol.LoadStat;
import java.util.Map;

/**
 * What the Jetty-hosted scheduler needs from an engine: its load (published as load reports and
 * shown on {@code /scheduler}), a view of what its scheduler is doing, and a call after each step.
 * Implementations must make {@link #load()} and {@link #view()} cheap and thread-safe (immutable
 * snapshots published by the engine thread).
 */
public interface SchedulerEngine {

    /** The current load in the load-report shape; one rank ({@code attnDpRank} 0) per engine. */
    LoadStat load();

    /**
     * What the scheduler is doing, JSON-friendly (strings, numbers, booleans, lists, maps):
     * by convention {@code strategy}, {@code budgets}, {@code waiting}, {@code running}, {@code counters}.
     */
    Map<String, Object> view();

    /** Registers {@code listener} to run after every engine step (on the engine thread; it must not block). */
    void addStepListener(Runnable listener);

    /**
     * False once the engine loop has died. A dead engine must not look fresh and idle: the hosting
     * component stops publishing load reports, so routers' freshness windows expire and they fall
     * back to their own counts. Default: always alive.
     */
    default boolean isAlive() {
        return true;
    }

    /** Tokens per KV block (page size), advertised as {@code block_size}; 0 = unknown (not advertised). */
    default int blockSizeTokens() {
        return 0;
    }

    /**
     * The busy signal: true when a new request would wait for a slot or KV rather than start, i.e.
     * every running slot is taken or the KV cache (with reservations) is full. Unknown limits (0)
     * never make an engine busy.
     */
    static boolean busy(LoadStat load) {
        LoadStat.Extension ext = load.ext();
        boolean slotsFull = ext != null && ext.maxRunningRequests() > 0 && load.numRunningReqs() >= ext.maxRunningRequests();
        long kvInUse = ext != null ? ext.numTotalTokens() : load.numTokens();
        boolean kvFull = load.maxTotalNumTokens() > 0 && kvInUse >= load.maxTotalNumTokens();
        return slotsFull || kvFull;
    }
}
