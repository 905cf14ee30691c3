package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DispatchLogTest {

    @Test
    void countBetween_matchesNaiveModelOverRandomTrace() {
        int capacity = 16;
        DispatchLog log = new DispatchLog(capacity);
        Map<String, List<Long>> model = new HashMap<>();
        SplittableRandom rnd = new SplittableRandom(3);
        long now = 0;
        for (int i = 0; i < 5_000; i++) {
            String w = "w" + rnd.nextInt(3);
            if (rnd.nextInt(4) > 0) {
                now += rnd.nextLong(0, 5);
                log.recordDispatch(w, now);
                model.computeIfAbsent(w, k -> new ArrayList<>()).add(now);
            } else {
                long after = now - rnd.nextLong(0, 40);
                long until = now - rnd.nextLong(0, 5);
                List<Long> times = model.getOrDefault(w, List.of());
                List<Long> kept = times.subList(Math.max(0, times.size() - capacity), times.size());
                long expected = kept.stream().filter(t -> t > after && t <= until).count();
                // The scan stops at the first entry <= after, exactly as the model's window does when
                // timestamps are non-decreasing.
                assertThat(log.countBetween(w, after, until)).as("op %d", i).isEqualTo((int) expected);
            }
        }
    }

    @Test
    void count_saturatesAtCapacityAndForgetClears() {
        DispatchLog log = new DispatchLog(4);
        for (int t = 1; t <= 10; t++) {
            log.recordDispatch("a", t);
        }
        assertThat(log.countBetween("a", 0, 100)).isEqualTo(4);
        log.forget("a");
        assertThat(log.countBetween("a", 0, 100)).isZero();
    }
}
