package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Checks the paged radix cache against a naive model: the set of cached page-aligned prefixes. */
class PrefixCacheTest {

    private static final int PAGE = 4;

    /** Naive model: every cached prefix (as a list of tokens) of whole pages. */
    private final Set<List<Integer>> model = new HashSet<>();

    private void modelInsert(int[] ids, int tokens) {
        for (int end = PAGE; end <= tokens; end += PAGE) {
            model.add(prefix(ids, end));
        }
    }

    private int modelMatch(int[] ids, int maxTokens) {
        int best = 0;
        for (int end = PAGE; end <= maxTokens; end += PAGE) {
            if (model.contains(prefix(ids, end))) {
                best = end;
            } else {
                break;
            }
        }
        return best;
    }

    private static List<Integer> prefix(int[] ids, int end) {
        List<Integer> l = new ArrayList<>(end);
        for (int i = 0; i < end; i++) {
            l.add(ids[i]);
        }
        return l;
    }

    @Test
    void matchAndInsert_agreeWithNaiveModel() {
        Random rnd = new Random(11);
        PrefixCache cache = new PrefixCache(PAGE);
        for (int i = 0; i < 3000; i++) {
            int[] ids = randomIds(rnd);
            if (rnd.nextBoolean()) {
                cache.insert(ids, ids.length);
                modelInsert(ids, ids.length);
            } else {
                int max = rnd.nextInt(ids.length + 1);
                PrefixCache.Match m = cache.matchAndLock(ids, max);
                assertThat(m.cachedTokens).isEqualTo(modelMatch(ids, max));
                cache.unlock(m);
            }
            assertThat(cache.cachedTokens()).isEqualTo((long) model.size() * PAGE);
            assertThat(cache.referencedTokens()).isZero();
        }
    }

    @Test
    void evict_removesLeastRecentlyUsedUnreferencedLeavesAndSparesLockedPaths() {
        PrefixCache cache = new PrefixCache(PAGE);
        int[] a = {1, 1, 1, 1, 2, 2, 2, 2};
        int[] b = {5, 5, 5, 5, 6, 6, 6, 6};
        int[] c = {9, 9, 9, 9};
        cache.insert(a, 8);
        cache.insert(b, 8);
        cache.insert(c, 4);
        PrefixCache.Match lockedA = cache.matchAndLock(a, 8); // a is now most recent and locked
        assertThat(cache.referencedTokens()).isEqualTo(8);
        long freed = cache.evict(8); // b's two pages are least recently used
        assertThat(freed).isEqualTo(8);
        assertThat(probe(cache, b)).isZero();
        assertThat(probe(cache, c)).isEqualTo(4);
        assertThat(cache.evict(100)).isEqualTo(4); // only c is evictable; a is locked
        assertThat(probe(cache, a)).isEqualTo(8);
        cache.unlock(lockedA);
        assertThat(cache.evict(100)).isEqualTo(8);
        assertThat(cache.cachedTokens()).isZero();
    }

    private static int probe(PrefixCache cache, int[] ids) {
        PrefixCache.Match m = cache.matchAndLock(ids, ids.length);
        cache.unlock(m);
        return m.cachedTokens;
    }

    private static int[] randomIds(Random rnd) {
        int len = 1 + rnd.nextInt(24);
        int[] ids = new int[len];
        for (int i = 0; i < len; i++) {
            ids[i] = rnd.nextInt(3); // small alphabet: many shared prefixes
        }
        return ids;
    }
}
