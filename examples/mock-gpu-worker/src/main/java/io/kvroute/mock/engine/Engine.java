package io.kvroute.mock.engine;

import java.util.concurrent.CompletableFuture;

/**
 * A simulated inference engine: the part of the mock GPU worker that turns admitted requests into
 * timed token streams. The HTTP layer ({@code io.kvroute.mock.http}) parses requests into
 * {@link EngineRequest}s and relays {@link TokenSink} events to clients; it knows nothing of how the
 * engine schedules.
 *
 * <p>Threading: {@link #submit} is thread-safe. Sink callbacks arrive on engine-owned threads, one
 * request's events in order, and must not block.
 */
public interface Engine extends AutoCloseable {

    /** Admits a request. Events flow to {@code sink}; the returned handle aborts it. */
    Submission submit(EngineRequest request, TokenSink sink);

    /** A point-in-time view of queues and counters, for /server_info, /scheduler and load reports. */
    EngineStats stats();

    /**
     * False once the engine can no longer make progress (its loop thread died on an unexpected
     * error): {@code /health} then fails and load reports stop. Thread-safe.
     */
    default boolean isAlive() {
        return true;
    }

    /** Static facts the engine advertises (capacity, page size, strategy). */
    EngineInfo info();

    /**
     * A JSON-able snapshot for {@code GET /scheduler}: {@code waiting} and {@code running} lists of
     * requests ({@code request_id}, {@code input_len}, {@code cached_len}, {@code high_priority_request},
     * {@code infer_high_priority}, {@code segment_index}) and {@code counters}. Thread-safe.
     */
    default java.util.Map<String, Object> schedulerView() {
        EngineStats s = stats();
        java.util.Map<String, Object> counters = new java.util.LinkedHashMap<>();
        counters.put("num_running_reqs", s.numRunningReqs());
        counters.put("num_waiting_reqs", s.numWaitingReqs());
        counters.put("num_used_tokens", s.numUsedTokens());
        counters.put("processed_prefill_tokens", s.processedPrefillTokens());
        counters.put("steps", s.steps());
        java.util.Map<String, Object> view = new java.util.LinkedHashMap<>();
        view.put("strategy", info().prefillQueueStrategy());
        view.put("waiting", java.util.List.of());
        view.put("running", java.util.List.of());
        view.put("counters", counters);
        return view;
    }

    /**
     * Registers a listener called on the engine thread after each executed step, with that step's
     * stats; it must not block. Engines without steps never call it (the default keeps nothing).
     */
    default void addStepListener(java.util.function.Consumer<EngineStats> listener) {}

    /** Reports prefix-cache pages entering and leaving as KV events; engines without a cache ignore it. */
    default void setCacheEventSink(CacheEventSink sink) {}

    /**
     * Empties the prefix cache, as SGLang's {@code /flush_cache} does, but only while no request is
     * running or waiting (SGLang refuses then too). Completes with true when flushed (the event sink
     * then reports {@code cleared()}), false when refused, exceptionally when the engine is closed or
     * dead. Thread-safe; engines without a cache have nothing to flush.
     */
    default CompletableFuture<Boolean> flushCache() {
        return CompletableFuture.completedFuture(true);
    }

    @Override
    void close();

    /** Aborts one submitted request; idempotent. */
    interface Submission {
        void abort();
    }
}
