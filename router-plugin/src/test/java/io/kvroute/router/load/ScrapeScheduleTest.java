package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ScrapeScheduleTest {
    private static final long MS = 1_000_000L;

    @Test
    void dueEveryIntervalWhileScrapesSucceed_andNeverTwiceInFlight() {
        ScrapeSchedule s = new ScrapeSchedule(200 * MS, 5000 * MS, 0);
        assertThat(s.tryStart(0)).isTrue();
        assertThat(s.tryStart(500 * MS)).as("one scrape in flight at most").isFalse();
        s.finish(0, true);
        assertThat(s.tryStart(199 * MS)).isFalse();
        assertThat(s.tryStart(200 * MS)).isTrue();
    }

    @Test
    void failuresDoubleTheWaitUpToTheCap_andASuccessResetsIt() {
        ScrapeSchedule s = new ScrapeSchedule(200 * MS, 1000 * MS, 0);
        long t = 0;
        long[] expected = {400, 800, 1000, 1000};
        for (long e : expected) {
            assertThat(s.tryStart(t)).isTrue();
            s.finish(t, false);
            assertThat(s.nextDueNanos() - t).isEqualTo(e * MS);
            t = s.nextDueNanos();
        }
        assertThat(s.tryStart(t)).isTrue();
        s.finish(t, true);
        assertThat(s.consecutiveFailures()).isZero();
        assertThat(s.nextDueNanos() - t).isEqualTo(200 * MS);
    }

    @Test
    void longFailureStreak_doesNotOverflow() {
        ScrapeSchedule s = new ScrapeSchedule(1, Long.MAX_VALUE / 2, 0);
        for (int i = 0; i < 200; i++) {
            s.tryStart(s.nextDueNanos());
            s.finish(0, false);
        }
        assertThat(s.delayNanos()).isEqualTo(Long.MAX_VALUE / 2);
    }
}
