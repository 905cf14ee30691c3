package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvroute.protocol.LoadReport;
import org.junit.jupiter.api.Test;

/** The socket-free table on a fake clock: the same freshness, dispatch counting and stream rules as the load plane. */
class DirectLoadTableTest {
    private static final long S = 1_000_000_000L;

    private final long[] now = {10 * S};
    private final DirectLoadTable table = new DirectLoadTable(LoadPlaneConfig.defaults(), () -> now[0]);

    private static LoadReport report(long seq, int running, int waiting, long prefilledTokens, long busyUs) {
        return new LoadReport(seq, running, waiting, 1000, 10_000, 0, true, 512L * waiting, 1200, 64, prefilledTokens, busyUs);
    }

    @Test
    void worker_isUnknownUntilItsFirstReport_thenFreshForTheWindowOnTheInjectedClock() {
        table.addWorker("a");
        assertThat(table.snapshot().fresh("a")).isEmpty();
        assertThat(table.snapshot().workerIds()).containsExactly("a");

        assertThat(table.apply("a", report(0, 2, 3, 0, 0))).isTrue();
        WorkerLoad l = table.snapshot().fresh("a").orElseThrow();
        assertThat(l.numRunningReqs()).isEqualTo(2);
        assertThat(l.numWaitingReqs()).isEqualTo(3);
        assertThat(l.capturedAtNanos()).isEqualTo(10 * S);

        now[0] = 15 * S;
        assertThat(table.snapshot().isFresh("a")).isTrue();
        now[0] = 15 * S + 1;
        assertThat(table.snapshot().isFresh("a")).isFalse();
    }

    @Test
    void dispatchesAfterTheReport_areAddedToItsWaitingCount() {
        table.addWorker("a");
        table.dispatchLog().recordDispatch("a", 10 * S); // at the report's instant: already counted by the engine
        table.apply("a", report(0, 0, 1, 0, 0));
        now[0] = 11 * S;
        table.dispatchLog().recordDispatch("a", 11 * S);
        table.dispatchLog().recordDispatch("a", 11 * S);
        WorkerLoad l = table.snapshot().fresh("a").orElseThrow();
        assertThat(l.numWaitingReqs()).isEqualTo(3);
        assertThat(l.routerDispatchesSinceCapture()).isEqualTo(2);
    }

    @Test
    void consecutiveReports_giveThePrefillThroughputEstimate() {
        table.addWorker("a");
        table.apply("a", report(0, 1, 2, 1_000, 100));
        now[0] = 11 * S;
        table.apply("a", report(1, 1, 2, 3_000, 1_100)); // 2,000 tokens in 1,000 µs: 2 tokens/µs
        // 1,024 waiting uncached tokens at 2 tokens/µs
        assertThat(table.snapshot().fresh("a").orElseThrow().estimatedPrefillQueueMs().getAsDouble())
                .isCloseTo(0.512, within(1e-9));
    }

    @Test
    void endOfReplaySeq_isIgnored_andUnknownWorkersAreRefused() {
        table.addWorker("a");
        assertThat(table.apply("a", report(-1, 9, 9, 0, 0))).isFalse();
        assertThat(table.snapshot().fresh("a")).isEmpty();
        assertThatThrownBy(() -> table.apply("b", report(0, 0, 0, 0, 0))).hasMessageContaining("b");
        assertThatThrownBy(() -> table.addWorker("a")).hasMessageContaining("already");
    }

    @Test
    void snapshots_seeOnlyTheTableOfTheirCapture() {
        table.addWorker("a");
        table.apply("a", report(0, 0, 0, 0, 0));
        EngineLoadSnapshot before = table.snapshot();
        table.apply("a", report(1, 0, 7, 0, 0));
        assertThat(before.fresh("a").orElseThrow().numWaitingReqs()).isZero();
        assertThat(table.snapshot().fresh("a").orElseThrow().numWaitingReqs()).isEqualTo(7);
        assertThat(table.snapshot().version()).isGreaterThan(before.version());
    }
}
