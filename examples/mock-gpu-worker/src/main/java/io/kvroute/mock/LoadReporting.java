package io.kvroute.mock;

import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.EngineStats;
import io.kvroute.scheduler.report.LoadPublisher;
import io.kvroute.scheduler.report.LoadStat;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Feeds the scheduler plugin's load-report publisher from the engine: after every engine step,
 * and from an idle ticker so an idle engine keeps reporting (the publisher's own rules decide what
 * is actually sent: every N steps and on change, an unchanged stat at most once per second).
 * Calls into the publisher are serialized here because steps and ticks come from two threads. Once
 * the engine loop has died ({@link Engine#isAlive}), nothing more is published.
 */
final class LoadReporting implements AutoCloseable {

    /** How often an idle engine reports; well under the router's 5 s freshness window. */
    private static final long IDLE_TICK_MILLIS = 200;

    private final LoadPublisher publisher;
    private final Engine engine;
    private final java.util.function.IntSupplier extraWaiting;
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mock-load-ticker");
        t.setDaemon(true);
        return t;
    });

    /** @param extraWaiting requests the engine does not see yet but that wait on this worker (KV transfers) */
    LoadReporting(LoadPublisher publisher, Engine engine, java.util.function.IntSupplier extraWaiting) {
        this.publisher = publisher;
        this.engine = engine;
        this.extraWaiting = extraWaiting;
        engine.addStepListener(this::publish);
        ticker.scheduleAtFixedRate(() -> publish(engine.stats()), 0, IDLE_TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    List<String> endpoints() {
        return publisher.endpoints();
    }

    private synchronized void publish(EngineStats stats) {
        if (!engine.isAlive()) {
            // A dead engine loop must not look fresh and idle: stop reporting, so the router's
            // freshness window expires and it falls back to its own counts.
            ticker.shutdown();
            return;
        }
        publisher.onStep(toLoadStat(stats, engine.info().maxRunningRequests(), extraWaiting.getAsInt()));
    }

    /** The engine's counters in SGLang's LoadStat shape, with the kvroute extension. */
    static LoadStat toLoadStat(EngineStats s, int maxRunningRequests, int extraWaiting) {
        return new LoadStat(s.numRunningReqs(), s.numWaitingReqs() + extraWaiting, s.numUsedTokens(), s.maxTotalNumTokens(), 0,
                new LoadStat.Extension(s.numWaitingUncachedTokens(), s.numTotalTokens(), maxRunningRequests,
                        s.totalPrefillUncachedTokens(), s.totalPrefillBusyMicros()));
    }

    @Override
    public void close() {
        ticker.shutdownNow();
        synchronized (this) {
            publisher.close();
        }
    }
}
