package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The primitive map against {@link HashMap} after every operation: random puts, removes (the
 * backward shift must keep every other key findable), clears and growth, over a small key universe
 * that includes 0 (the empty-cell marker) and keys whose slots collide.
 */
class LongLongMapTest {

    @Test
    void randomOperations_matchHashMap() {
        for (long seed = 1; seed <= 5; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            List<Long> universe = new ArrayList<>(List.of(0L, 1L, -1L, Long.MIN_VALUE, Long.MAX_VALUE));
            for (int i = 0; i < 200; i++) {
                universe.add(rnd.nextLong());
            }
            LongLongMap map = new LongLongMap();
            Map<Long, Long> model = new HashMap<>();
            for (int op = 0; op < 10_000; op++) {
                long key = universe.get(rnd.nextInt(universe.size()));
                int kind = rnd.nextInt(100);
                if (kind < 55) {
                    long v = rnd.nextLong();
                    assertThat(map.put(key, v)).isEqualTo(model.put(key, v) == null);
                } else if (kind < 99) {
                    assertThat(map.remove(key)).isEqualTo(model.remove(key) != null);
                } else {
                    map.clear();
                    model.clear();
                }
                check(map, model, universe);
            }
        }
    }

    @Test
    void manyKeys_growAndShrinkBackOnClear() {
        LongLongMap map = new LongLongMap();
        long small = map.bytes();
        for (long k = 1; k <= 10_000; k++) {
            map.put(k * 0x9E3779B97F4A7C15L, k);
        }
        assertThat(map.size()).isEqualTo(10_000);
        assertThat(map.bytes()).isGreaterThan(10_000L * 16);
        for (long k = 1; k <= 10_000; k += 2) {
            assertThat(map.remove(k * 0x9E3779B97F4A7C15L)).isTrue();
        }
        for (long k = 2; k <= 10_000; k += 2) {
            assertThat(map.valueAt(map.find(k * 0x9E3779B97F4A7C15L))).isEqualTo(k);
        }
        map.clear();
        assertThat(map.size()).isZero();
        assertThat(map.bytes()).isEqualTo(small);
    }

    /** Plain comparisons first: AssertJ per key and operation would make this test slow. */
    private static void check(LongLongMap map, Map<Long, Long> model, List<Long> universe) {
        assertThat(map.size()).isEqualTo(model.size());
        for (long k : universe) {
            int cell = map.find(k);
            Long expected = model.get(k);
            boolean ok = expected == null ? cell < 0 : cell >= 0 && map.valueAt(cell) == expected;
            if (!ok) {
                throw new AssertionError("key " + k + ": expected " + expected + ", cell " + cell
                        + (cell >= 0 ? " value " + map.valueAt(cell) : ""));
            }
        }
    }
}
