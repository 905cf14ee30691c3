package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The engine's cache flush (SGLang's {@code /flush_cache}): refused while a request runs or waits,
 * otherwise every page goes and the KV-event sink hears {@code cleared()} once.
 */
class FlushCacheTest {
    private final FakeClock clock = new FakeClock();

    /** Records what the cache reports. */
    private static final class Events implements CacheEventSink {
        final List<String> seen = new ArrayList<>();

        @Override
        public void stored(long[] hashes, Long parentHash, int[] tokens, int pageSize) {
            seen.add("stored:" + hashes.length);
        }

        @Override
        public void removed(long[] hashes) {
            seen.add("removed:" + hashes.length);
        }

        @Override
        public void cleared() {
            seen.add("cleared");
        }
    }

    private static void runUntilIdle(EngineCore core) throws InterruptedException {
        for (int i = 0; i < 1_000_000 && core.hasWork(); i++) {
            core.runOnce();
        }
    }

    @Test
    void flush_isRefusedWhileARequestRuns_thenEmptiesTheCacheAndReportsCleared() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults().withKv(1 << 20, 16), clock);
        Events events = new Events();
        core.setCacheEventSink(events);
        int[] prompt = EngineCoreTest.ids(100, 3);
        core.submit(EngineCoreTest.req("a", prompt, 50), new RecordingSink(clock));
        core.runOnce(); // admitted and prefilled: running
        CompletableFuture<Boolean> busy = core.requestFlush();
        core.runOnce();
        assertThat(busy).isCompletedWithValue(false);
        runUntilIdle(core);
        assertThat(events.seen).containsExactly("cleared", "stored:6");

        CompletableFuture<Boolean> idle = core.requestFlush();
        core.runOnce();
        assertThat(idle).isCompletedWithValue(true);
        assertThat(events.seen).containsExactly("cleared", "stored:6", "cleared");
        RecordingSink again = new RecordingSink(clock);
        core.submit(EngineCoreTest.req("b", prompt, 1), again);
        runUntilIdle(core);
        assertThat(again.cachedTokens).isZero(); // the pages are gone, not just unreported
        assertThat(events.seen).endsWith("stored:6"); // and come back as new stores
    }

    @Test
    void flush_refusesWhileARequestWaitsForAdmission() throws Exception {
        // one running slot: the second request waits at the gate
        EngineCore core = new EngineCore(EngineConfig.defaults().withKv(1 << 20, 16).withBudgets(16384, 8192, 1), clock);
        core.submit(EngineCoreTest.req("a", EngineCoreTest.ids(40, 1), 50), new RecordingSink(clock));
        core.runOnce();
        core.submit(EngineCoreTest.req("b", EngineCoreTest.ids(40, 2), 5), new RecordingSink(clock));
        core.runOnce();
        CompletableFuture<Boolean> f = core.requestFlush();
        core.runOnce();
        assertThat(f).isCompletedWithValue(false);
    }

    @Test
    void prefixCache_flushWithLockedPages_isAnImpossibleState() {
        PrefixCache cache = new PrefixCache(4);
        int[] ids = {1, 2, 3, 4, 5, 6, 7, 8};
        cache.insert(ids, 8);
        PrefixCache.Match m = cache.matchAndLock(ids, 8);
        assertThatThrownBy(cache::flush).isInstanceOf(IllegalStateException.class);
        cache.unlock(m);
        cache.flush();
        assertThat(cache.cachedTokens()).isZero();
        assertThat(cache.matchAndLock(ids, 8).cachedTokens).isZero();
    }

    @Test
    void scheduledEngine_flushAnswersFromTheEngineThread_andFailsOnceClosed() throws Exception {
        ScheduledEngine engine = ScheduledEngine.start(EngineConfig.defaults());
        try {
            assertThat(engine.flushCache().get(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            engine.close();
        }
        assertThat(engine.flushCache()).isCompletedExceptionally();
    }
}
