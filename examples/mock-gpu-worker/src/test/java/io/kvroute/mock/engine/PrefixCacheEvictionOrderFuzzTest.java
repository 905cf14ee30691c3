package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The prefix cache's incrementally kept eviction order against the naive model (a walk over the
 * whole tree collecting unreferenced leaves, sorted by last access) after every operation of random
 * inserts, locked matches, unlocks, evictions and flushes over prompts that share pages.
 */
class PrefixCacheEvictionOrderFuzzTest {

    private static final int PAGE = 2;

    @Test
    void evictionOrder_matchesAWalkOfTheTreeAfterEveryOperation() {
        for (long seed = 1; seed <= 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            PrefixCache cache = new PrefixCache(PAGE);
            List<PrefixCache.Match> locked = new ArrayList<>();
            for (int op = 0; op < 400; op++) {
                int[] ids = prompt(random);
                int choice = random.nextInt(10);
                if (choice < 4) {
                    cache.insert(ids, ids.length);
                } else if (choice < 6) {
                    locked.add(cache.matchAndLock(ids, ids.length));
                } else if (choice < 8 && !locked.isEmpty()) {
                    cache.unlock(locked.remove(random.nextInt(locked.size())));
                } else if (choice < 10 - 1 || !locked.isEmpty()) {
                    long before = cache.cachedTokens();
                    long freed = cache.evict(PAGE * (1 + random.nextInt(4)));
                    assertThat(cache.cachedTokens()).isEqualTo(before - freed);
                } else {
                    cache.flush();
                }
                assertThat(cache.evictionOrder()).as("seed %d op %d", seed, op)
                        .containsExactlyElementsOf(cache.evictionOrderByWalk());
            }
        }
    }

    /** 1-6 pages from a 3-token alphabet: prompts share prefixes often, and diverge mid-path. */
    private static int[] prompt(SplittableRandom random) {
        int[] ids = new int[PAGE * (1 + random.nextInt(6))];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = random.nextInt(3);
        }
        return ids;
    }
}
