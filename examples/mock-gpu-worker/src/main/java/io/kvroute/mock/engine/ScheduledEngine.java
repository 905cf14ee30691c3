package io.kvroute.mock.engine;

import static java.util.Objects.requireNonNull;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The mock GPU worker's engine: an {@link EngineCore} driven by one engine thread. The thread runs
 * steps back to back while there is runnable work and parks when there is none; {@link #submit}
 * unparks it. Time and sleeping come from the injected {@link EngineClock}, so a fake clock makes
 * the loop run instantly in tests.
 *
 * <p>Threading: {@link #submit}, {@link #stats}, {@link #schedulerView}, {@link #info} and
 * {@link #close} are thread-safe; sink callbacks and step listeners run on the engine thread,
 * except the {@code abort} endings that {@link #close} delivers on the closing thread after the
 * engine thread has stopped.
 */
public final class ScheduledEngine implements Engine {

    /** Longest idle park: bounds how late a resource-wait timeout can fire when nothing runs. */
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final EngineCore core;
    private final Thread engineThread;
    private volatile boolean closed;
    /** The error that ended the engine loop, or null while it runs (or after a clean close). */
    private volatile Throwable failure;

    private ScheduledEngine(EngineConfig config, EngineClock clock, String threadName) {
        this.core = new EngineCore(config, clock);
        this.engineThread = new Thread(this::loop, threadName);
        this.engineThread.setDaemon(true);
    }

    /** Starts an engine on the system clock. */
    public static ScheduledEngine start(EngineConfig config) {
        return start(config, EngineClock.system());
    }

    public static ScheduledEngine start(EngineConfig config, EngineClock clock) {
        ScheduledEngine engine = new ScheduledEngine(requireNonNull(config, "config"),
                requireNonNull(clock, "clock"), "kvroute-engine");
        engine.engineThread.start();
        return engine;
    }

    @Override
    public Submission submit(EngineRequest request, TokenSink sink) {
        if (closed) {
            throw new IllegalStateException("engine closed");
        }
        if (failure != null) {
            throw new IllegalStateException("engine loop died: " + failure);
        }
        Submission handle = core.submit(request, sink);
        LockSupport.unpark(engineThread);
        return () -> {
            handle.abort();
            LockSupport.unpark(engineThread);
        };
    }

    @Override
    public boolean isAlive() {
        return failure == null && !closed;
    }

    /** The error that stopped the engine loop, if any. */
    public Throwable failure() {
        return failure;
    }

    @Override
    public EngineStats stats() {
        return core.stats();
    }

    @Override
    public EngineInfo info() {
        return core.info();
    }

    @Override
    public Map<String, Object> schedulerView() {
        return core.schedulerView();
    }

    @Override
    public void addStepListener(Consumer<EngineStats> listener) {
        core.addStepListener(listener);
    }

    @Override
    public void setCacheEventSink(CacheEventSink sink) {
        core.setCacheEventSink(sink);
    }

    @Override
    public CompletableFuture<Boolean> flushCache() {
        if (closed || failure != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(closed ? "engine closed" : "engine loop died"));
        }
        CompletableFuture<Boolean> done = core.requestFlush();
        LockSupport.unpark(engineThread);
        return done;
    }

    @Override
    public void close() {
        closed = true;
        engineThread.interrupt();
        try {
            engineThread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (!engineThread.isAlive()) {
            core.abortAll(); // outstanding requests end with "abort" rather than never
        }
    }

    private void loop() {
        try {
            while (!closed) {
                if (!core.runOnce() && !core.hasInbox()) {
                    LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                }
                if (Thread.interrupted() && closed) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            // close() interrupts a sleeping step; nothing to clean up in a simulation
        } catch (RuntimeException | Error e) {
            failure = e;
            System.err.println("kvroute-engine: engine loop died: " + e);
            try {
                core.abortAll(); // end every outstanding request instead of leaving clients hanging
            } catch (RuntimeException | Error again) {
                e.addSuppressed(again);
            }
        }
    }
}
