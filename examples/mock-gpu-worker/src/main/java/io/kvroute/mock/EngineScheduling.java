package io.kvroute.mock;

import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.EngineStats;
import io.kvroute.scheduler.engine.SchedulerEngine;
import io.kvroute.protocol.LoadStat;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * The mock engine as the scheduler plugin sees any Java engine: through the public
 * {@link SchedulerEngine} SPI. The Jetty-hosted {@code KvScheduler} publishes this load after every
 * step and on its idle tick, and serves this view on {@code /scheduler}. Public only for
 * {@link #toLoadStat}, which the bench's virtual-time fleet uses to report what these workers report.
 */
public final class EngineScheduling implements SchedulerEngine {

    private final Engine engine;
    private final IntSupplier extraWaiting;

    /** @param extraWaiting requests the engine does not see yet but that wait on this worker (KV transfers) */
    EngineScheduling(Engine engine, IntSupplier extraWaiting) {
        this.engine = engine;
        this.extraWaiting = extraWaiting;
    }

    @Override
    public LoadStat load() {
        return toLoadStat(engine.stats(), engine.info().maxRunningRequests(), extraWaiting.getAsInt());
    }

    @Override
    public Map<String, Object> view() {
        return engine.schedulerView();
    }

    @Override
    public void addStepListener(Runnable listener) {
        engine.addStepListener(stats -> listener.run());
    }

    /** Once the engine loop has died the scheduler stops publishing (and {@code /health} fails). */
    @Override
    public boolean isAlive() {
        return engine.isAlive();
    }

    @Override
    public int blockSizeTokens() {
        return engine.info().pageSize();
    }

    /**
     * The engine's counters in SGLang's LoadStat shape, with the kvroute extension, whose
     * {@code num_total_tokens} counts KV in use plus admission reservations not yet materialized.
     */
    public static LoadStat toLoadStat(EngineStats s, int maxRunningRequests, int extraWaiting) {
        return new LoadStat(s.numRunningReqs(), s.numWaitingReqs() + extraWaiting, s.numUsedTokens(), s.maxTotalNumTokens(), 0,
                new LoadStat.Extension(s.numWaitingUncachedTokens(), s.numTotalTokens(), maxRunningRequests,
                        s.totalPrefillUncachedTokens(), s.totalPrefillBusyMicros()));
    }
}
