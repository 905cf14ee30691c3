package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The load plane's per-worker report logic without sockets: seq, gaps, restarts, ranks. */
class LoadReportStreamTest {

    private static LoadReport report(long seq, int rank, long prefilledTokens, long busyUs) {
        return new LoadReport(seq, 1, 2, 3, 100, rank, true, 0, 0, 8, prefilledTokens, busyUs);
    }

    @Test
    void inOrderReports_applyWithoutGaps_andDeriveThroughputFromThePreviousSample() {
        LoadReportStream stream = new LoadReportStream(1);
        WorkerState st = WorkerState.empty("w", List.of("tcp://a"), 1);
        LoadReportStream.Step first = stream.apply(st, 0, report(7, 0, 100, 10), 1_000);
        assertThat(first.verdict()).isEqualTo(LoadReportStream.Verdict.APPLIED);
        LoadReportStream.Step second = stream.apply(first.next(), 0, report(8, 0, 300, 20), 2_000);
        assertThat(second.verdict()).isEqualTo(LoadReportStream.Verdict.APPLIED);
        assertThat(second.next().rank(0).prefillTokensPerUs()).isEqualTo(20.0);
        assertThat(second.next().rank(0).receivedAtNanos()).isEqualTo(2_000);
        assertThat(second.next().missedReports()).isZero();
    }

    @Test
    void aJump_countsTheMissedReports_aStepBack_isARestartThatForgetsThroughput() {
        LoadReportStream stream = new LoadReportStream(1);
        WorkerState st = stream.apply(WorkerState.empty("w", List.of("tcp://a"), 1), 0, report(1, 0, 100, 10), 0).next();
        st = stream.apply(st, 0, report(2, 0, 200, 20), 0).next();
        LoadReportStream.Step gap = stream.apply(st, 0, report(6, 0, 300, 30), 0);
        assertThat(gap.verdict()).isEqualTo(LoadReportStream.Verdict.GAP);
        assertThat(gap.missed()).isEqualTo(3);
        assertThat(gap.next().missedReports()).isEqualTo(3);
        // counters above the old ones: only forgetting the old sample (not the counters) leaves throughput unknown
        LoadReportStream.Step restart = stream.apply(gap.next(), 0, report(0, 0, 400, 40), 0);
        assertThat(restart.verdict()).isEqualTo(LoadReportStream.Verdict.RESTART);
        assertThat(restart.next().rank(0).prefillTokensPerUs()).isNaN();
        assertThat(restart.next().missedReports()).isEqualTo(3);
    }

    @Test
    void seqMinusOne_andARankBeyondTheDpSize_changeNothing_andAResubscriptionIsNoGap() {
        LoadReportStream stream = new LoadReportStream(2);
        WorkerState st = WorkerState.empty("w", List.of("tcp://a"), 2);
        st = stream.apply(st, 1, report(10, 1, 0, 0), 0).next();
        LoadReportStream.Step end = stream.apply(st, 1, report(-1, 1, 0, 0), 0);
        assertThat(end.verdict()).isEqualTo(LoadReportStream.Verdict.IGNORED);
        assertThat(end.next()).isSameAs(st);
        LoadReportStream.Step outOfRange = stream.apply(st, 2, report(11, 2, 0, 0), 0);
        assertThat(outOfRange.verdict()).isEqualTo(LoadReportStream.Verdict.RANK_OUT_OF_RANGE);
        assertThat(outOfRange.next()).isSameAs(st);
        stream.onResubscribed();
        LoadReportStream.Step after = stream.apply(st, 1, report(500, 1, 0, 0), 0);
        assertThat(after.verdict()).isEqualTo(LoadReportStream.Verdict.APPLIED);
        assertThat(after.missed()).isZero();
    }

    /** Random seqs, ranks and resubscriptions against a per-rank "last seq seen" model. */
    @Test
    void randomReports_matchANaiveModel() {
        for (long seed = 0; seed < 500; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            int dpSize = 1 + random.nextInt(3);
            LoadReportStream stream = new LoadReportStream(dpSize);
            WorkerState st = WorkerState.empty("w", List.of("tcp://a"), dpSize);
            Long[] last = new Long[dpSize];
            long missedTotal = 0;
            List<String> history = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                if (random.nextInt(20) == 0) {
                    stream.onResubscribed();
                    last = new Long[dpSize];
                    history.add("resubscribe");
                    continue;
                }
                int rank = random.nextInt(dpSize + 1) - (random.nextInt(10) == 0 ? 1 : 0);
                long base = rank >= 0 && rank < dpSize && last[rank] != null ? last[rank] : 0;
                long seq = switch (random.nextInt(5)) {
                    case 0 -> -1;
                    case 1 -> base + 1 + random.nextInt(4);
                    case 2 -> Math.max(0, base - random.nextInt(3));
                    default -> base + 1;
                };
                history.add(rank + ":" + seq);
                LoadReportStream.Step step = stream.apply(st, rank, report(seq, rank, 0, 0), i);
                LoadReportStream.Verdict expected;
                long missed = 0;
                if (seq == -1) {
                    expected = LoadReportStream.Verdict.IGNORED;
                } else if (rank < 0 || rank >= dpSize) {
                    expected = LoadReportStream.Verdict.RANK_OUT_OF_RANGE;
                } else if (last[rank] == null || seq == last[rank] + 1) {
                    expected = LoadReportStream.Verdict.APPLIED;
                } else if (seq > last[rank] + 1) {
                    expected = LoadReportStream.Verdict.GAP;
                    missed = seq - last[rank] - 1;
                } else {
                    expected = LoadReportStream.Verdict.RESTART;
                }
                if (expected != LoadReportStream.Verdict.IGNORED && expected != LoadReportStream.Verdict.RANK_OUT_OF_RANGE) {
                    last[rank] = seq;
                }
                missedTotal += missed;
                String where = "seed " + seed + " " + history;
                assertThat(step.verdict()).as(where).isEqualTo(expected);
                assertThat(step.missed()).as(where).isEqualTo(missed);
                assertThat(step.next().missedReports()).as(where).isEqualTo(missedTotal);
                if (expected == LoadReportStream.Verdict.IGNORED || expected == LoadReportStream.Verdict.RANK_OUT_OF_RANGE) {
                    assertThat(step.next()).as(where).isSameAs(st);
                } else {
                    assertThat(step.next().rank(rank).report().seq()).as(where).isEqualTo(seq);
                }
                st = step.next();
            }
        }
    }
}
