package io.kvroute.mock.engine;

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

    /** Static facts the engine advertises (capacity, page size, strategy). */
    EngineInfo info();

    /** A JSON-able view of the waiting and running queues and counters, for GET /scheduler. */
    default java.util.Map<String, Object> schedulerView() {
        return java.util.Map.of();
    }

    /** Registers a listener called on the engine thread after every executed step. */
    default void addStepListener(java.util.function.Consumer<EngineStats> listener) {}

    @Override
    void close();

    /** Aborts one submitted request; idempotent. */
    interface Submission {
        void abort();
    }
}
