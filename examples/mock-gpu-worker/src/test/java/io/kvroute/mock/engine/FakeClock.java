package io.kvroute.mock.engine;

/** A clock whose sleeps advance time instantly. */
final class FakeClock implements EngineClock {

    private volatile long nowNanos;

    @Override
    public long nanoTime() {
        return nowNanos;
    }

    @Override
    public void sleepNanos(long nanos) {
        nowNanos += nanos;
    }

    void advanceMillis(long millis) {
        nowNanos += millis * 1_000_000L;
    }

    void advanceNanos(long nanos) {
        nowNanos += nanos;
    }

    double millis() {
        return nowNanos / 1e6;
    }
}
