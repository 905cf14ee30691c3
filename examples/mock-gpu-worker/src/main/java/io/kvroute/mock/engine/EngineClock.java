package io.kvroute.mock.engine;

/**
 * Time source and sleeper of the engine loop, injected so tests run on a fake clock instantly (a
 * fake's {@link #sleepNanos} just advances its time).
 */
public interface EngineClock {

    long nanoTime();

    void sleepNanos(long nanos) throws InterruptedException;

    /** {@link System#nanoTime()} and {@link Thread#sleep}. */
    static EngineClock system() {
        return new EngineClock() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleepNanos(long nanos) throws InterruptedException {
                if (nanos > 0) {
                    Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
                }
            }
        };
    }
}
