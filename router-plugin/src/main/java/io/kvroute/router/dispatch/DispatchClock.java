package io.kvroute.router.dispatch;

/**
 * Time and timers for the dispatch core, injected so retries, backoff and busy windows can be
 * tested on a fake clock (grpc-java's {@code FakeClock}). Tasks never run inline.
 */
public interface DispatchClock {

    /** Monotonic nanoseconds, comparable only with each other. */
    long nanoTime();

    /** Runs {@code task} once after {@code delayNanos}, on another thread or a later tick. */
    void schedule(Runnable task, long delayNanos);
}
