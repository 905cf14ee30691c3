package io.kvroute.router.load;

import static io.kvroute.router.load.LoadFixtures.at;
import static io.kvroute.router.load.LoadFixtures.base;
import static io.kvroute.router.load.LoadFixtures.ext;
import static io.kvroute.router.load.LoadFixtures.snapshot;
import static io.kvroute.router.load.LoadFixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EngineLoadSnapshotTest {
    private static final long S = 1_000_000_000L;

    @Test
    void report_isFreshUpToTheWindowAndStaleOneNanoAfter() {
        WorkerState w = worker("a", 1, at(base(0, 2, 3, 10, 100), 10 * S));
        assertThat(snapshot(15 * S, new DispatchLog(), w).fresh("a")).isPresent();
        assertThat(snapshot(15 * S + 1, new DispatchLog(), w).fresh("a")).isEmpty();
        assertThat(snapshot(15 * S + 1, new DispatchLog(), w).pressureSource("a")).isEqualTo(PressureSource.ROUTER_LOCAL);
    }

    @Test
    void oneStaleRank_makesTheWholeWorkerUnknown() {
        WorkerState w = worker("a", 2, at(base(0, 1, 1, 10, 100), 9 * S), at(base(1, 1, 1, 10, 100), 1 * S));
        EngineLoadSnapshot snap = snapshot(9 * S, new DispatchLog(), w);
        assertThat(snap.fresh("a")).isEmpty();
        assertThat(snap.isFresh("a")).isFalse();
    }

    @Test
    void rankThatNeverReported_makesTheWorkerUnknown() {
        WorkerState w = worker("a", 3, at(base(0, 1, 1, 10, 100), S), at(base(2, 1, 1, 10, 100), S));
        assertThat(snapshot(S, new DispatchLog(), w).fresh("a")).isEmpty();
    }

    @Test
    void freshWorker_sumsRanksAndTakesTheOldestArrivalAsCapturedAt() {
        WorkerState w = worker("a", 2, at(base(0, 2, 3, 100, 1000), 7 * S), at(base(1, 4, 5, 50, 1000), 6 * S));
        WorkerLoad l = snapshot(8 * S, new DispatchLog(), w).fresh("a").orElseThrow();
        assertThat(l.numRunningReqs()).isEqualTo(6);
        assertThat(l.numWaitingReqs()).isEqualTo(8);
        assertThat(l.numTokens()).isEqualTo(150);
        assertThat(l.maxTotalNumTokens()).isEqualTo(2000);
        assertThat(l.capturedAtNanos()).isEqualTo(6 * S);
        assertThat(l.kvUsageFraction().getAsDouble()).isEqualTo(0.075);
        assertThat(l.hasExtension()).isFalse();
        assertThat(l.estimatedPrefillQueueMs()).isEmpty();
    }

    @Test
    void unknownCapacityOnAnyRank_makesTheWorkerCapacityUnknown() {
        WorkerState w = worker("a", 2, at(base(0, 0, 0, 100, 1000), S), at(base(1, 0, 0, 50, 0), S));
        WorkerLoad l = snapshot(S, new DispatchLog(), w).fresh("a").orElseThrow();
        assertThat(l.maxTotalNumTokens()).isZero();
        assertThat(l.kvUsageFraction()).isEmpty();
    }

    @Test
    void dispatchesAfterCapturedAtAndUpToTheCaptureInstant_areAddedToWaiting() {
        DispatchLog log = new DispatchLog();
        WorkerState w = worker("a", 2, at(base(0, 0, 3, 0, 0), 10 * S), at(base(1, 0, 2, 0, 0), 8 * S));
        log.recordDispatch("a", 7 * S);      // before the oldest rank's report: already counted by the engine
        log.recordDispatch("a", 8 * S);      // at captured_at: counted by the engine too (exclusive bound)
        log.recordDispatch("a", 9 * S);      // after
        log.recordDispatch("a", 11 * S);     // after
        log.recordDispatch("a", 12 * S + 1); // after the snapshot was captured: not this request's view
        log.recordDispatch("b", 11 * S);     // another worker
        WorkerLoad l = snapshot(12 * S, log, w).fresh("a").orElseThrow();
        assertThat(l.routerDispatchesSinceCapture()).isEqualTo(2);
        assertThat(l.numWaitingReqs()).isEqualTo(5 + 2);
        assertThat(l.engineNumWaitingReqs()).isEqualTo(5);
    }

    @Test
    void estimatedQueue_isWaitingUncachedOverThroughputFromTwoReports() {
        // 4,000 tokens in 2,000 busy us = 2 tokens/us; 10,000 waiting tokens -> 5,000 us = 5 ms.
        RankSample first = RankSample.next(null, ext(0, 1, 2, 0, 1_000, 500), S);
        RankSample second = RankSample.next(first, ext(0, 1, 2, 10_000, 5_000, 2_500), 2 * S);
        assertThat(second.prefillTokensPerUs()).isEqualTo(2.0);
        WorkerLoad l = snapshot(2 * S, new DispatchLog(), worker("a", 1, second)).fresh("a").orElseThrow();
        assertThat(l.estimatedPrefillQueueMs().getAsDouble()).isCloseTo(5.0, within(1e-9));
        assertThat(snapshot(2 * S, new DispatchLog(), worker("a", 1, second)).pressureSource("a"))
                .isEqualTo(PressureSource.ESTIMATED_PREFILL_QUEUE_MS);
    }

    @Test
    void throughput_isKeptWhenIdleAndForgottenWhenCountersGoBackwards() {
        RankSample a = RankSample.next(null, ext(0, 0, 0, 0, 1_000, 1_000), S);
        RankSample b = RankSample.next(a, ext(0, 0, 0, 0, 3_000, 2_000), 2 * S);
        RankSample idle = RankSample.next(b, ext(0, 0, 0, 0, 3_000, 2_000), 3 * S);
        RankSample restarted = RankSample.next(idle, ext(0, 0, 5, 800, 10, 10), 4 * S);
        assertThat(b.prefillTokensPerUs()).isEqualTo(2.0);
        assertThat(idle.prefillTokensPerUs()).isEqualTo(2.0);
        assertThat(restarted.prefillTokensPerUs()).isNaN();
        WorkerLoad l = snapshot(4 * S, new DispatchLog(), worker("a", 1, restarted)).fresh("a").orElseThrow();
        assertThat(l.estimatedPrefillQueueMs()).isEmpty();
        assertThat(l.numWaitingUncachedTokens()).isEqualTo(800);
    }

    @Test
    void nothingWaiting_estimatesZeroEvenWithoutThroughput() {
        RankSample only = RankSample.next(null, ext(0, 3, 0, 0, 100, 100), S);
        WorkerLoad l = snapshot(S, new DispatchLog(), worker("a", 1, only)).fresh("a").orElseThrow();
        assertThat(l.estimatedPrefillQueueMs().getAsDouble()).isZero();
    }

    @Test
    void anyFreshQueueBelow_ignoresStaleAndUnknownWorkers() {
        WorkerState busy = worker("busy", 1, at(base(0, 0, 9, 0, 0), 10 * S));
        WorkerState staleIdle = worker("stale", 1, at(base(0, 0, 0, 0, 0), 1 * S));
        WorkerState idle = worker("idle", 1, at(base(0, 0, 1, 0, 0), 10 * S));
        EngineLoadSnapshot snap = snapshot(10 * S, new DispatchLog(), busy, staleIdle, idle);
        assertThat(snap.anyFreshQueueBelow(List.of("busy", "stale", "unknown"), 5)).isFalse();
        assertThat(snap.anyFreshQueueBelow(List.of("busy", "idle"), 5)).isTrue();
        assertThat(snap.anyFreshQueueBelow(List.of("busy", "idle"), 1)).isFalse();
    }

    @Test
    void view_reportsFreshAndStaleWorkersWithTheirSource() {
        WorkerState fresh = worker("f", 1, at(base(0, 2, 3, 0, 0), 10 * S));
        WorkerState stale = worker("s", 2, at(base(0, 1, 1, 0, 0), 1 * S));
        List<Map<String, Object>> view = LoadView.of(snapshot(10 * S, new DispatchLog(), fresh, stale));
        assertThat(view).hasSize(2);
        assertThat(view.get(0)).containsEntry("url", "f").containsEntry("fresh", true).containsEntry("age_ms", 0L)
                .containsEntry("num_waiting_reqs", 3).containsEntry("num_running_reqs", 2)
                .containsEntry("pressure_source", "native_queue_tokens").containsEntry("seq", List.of(0L));
        assertThat(view.get(1)).containsEntry("url", "s").containsEntry("fresh", false).containsEntry("age_ms", null)
                .containsEntry("ranks_reported", 1).containsEntry("pressure_source", "router_local");
    }
}
