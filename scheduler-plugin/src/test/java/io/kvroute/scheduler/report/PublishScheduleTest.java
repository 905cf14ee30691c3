package io.kvroute.scheduler.report;

import io.kvroute.protocol.LoadStat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PublishScheduleTest {
    private static final long MS = 1_000_000L;
    private static final long SECOND = 1000 * MS;

    private static LoadStat stat(int waiting) {
        return LoadStat.base(1, waiting, 100, 1000, 0);
    }

    @Test
    void firstStat_isAlwaysSent() {
        assertThat(new PublishSchedule(5, SECOND).onStep(stat(0), 0)).isTrue();
    }

    @Test
    void changingStat_isSentEveryFifthStep() {
        PublishSchedule s = new PublishSchedule(5, SECOND);
        List<Integer> sentAtStep = new ArrayList<>();
        for (int step = 0; step < 16; step++) {
            if (s.onStep(stat(step), step * MS)) {
                sentAtStep.add(step);
            }
        }
        assertThat(sentAtStep).containsExactly(0, 5, 10, 15);
    }

    @Test
    void unchangedStat_isResentAtMostOncePerSecond() {
        PublishSchedule s = new PublishSchedule(5, SECOND);
        List<Long> sentAtMs = new ArrayList<>();
        for (long t = 0; t <= 2500; t += 10) {
            if (s.onStep(stat(3), t * MS)) {
                sentAtMs.add(t);
            }
        }
        assertThat(sentAtMs).containsExactly(0L, 1000L, 2000L);
    }

    @Test
    void changeAfterQuietPeriod_isSentOnTheFirstStep() {
        PublishSchedule s = new PublishSchedule(5, SECOND);
        s.onStep(stat(0), 0);
        for (int i = 1; i <= 20; i++) {
            assertThat(s.onStep(stat(0), i * MS)).isFalse();
        }
        assertThat(s.onStep(stat(9), 21 * MS)).isTrue();
    }

    @Test
    void randomTrace_matchesNaiveModel() {
        SplittableRandom rnd = new SplittableRandom(42);
        PublishSchedule s = new PublishSchedule(3, 200 * MS);
        LoadStat lastSent = null;
        long lastSentAt = 0;
        int steps = 0;
        long now = 0;
        for (int i = 0; i < 20_000; i++) {
            now += rnd.nextLong(0, 40 * MS);
            LoadStat st = stat(rnd.nextInt(100) < 80 ? 1 : rnd.nextInt(3));
            boolean expected;
            if (lastSent == null) {
                expected = true;
            } else {
                steps++;
                expected = steps >= 3 && (!st.equals(lastSent) || now - lastSentAt >= 200 * MS);
            }
            assertThat(s.onStep(st, now)).as("step %d", i).isEqualTo(expected);
            if (expected) {
                lastSent = st;
                lastSentAt = now;
                steps = 0;
            }
        }
    }

    @Test
    void rejectsZeroSteps() {
        assertThatThrownBy(() -> new PublishSchedule(0, SECOND)).hasMessageContaining("everySteps");
    }
}
