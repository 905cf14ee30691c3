package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The global byte bound holds across workers whose own capacity is far from
 * reached, and it evicts the least recently used keys whoever owns them.
 */
class PrefixIndexByteBoundTest {

    private static int[] key(int worker, int length) {
        int[] k = new int[length];
        for (int i = 0; i < length; i++) {
            k[i] = worker * 100_000 + i;
        }
        return k;
    }

    @Test
    void manyWorkers_underTheirOwnCapacity_stayWithinTheGlobalBytes_oldestEvictedFirst() {
        long maxBytes = 64 * 1024;
        long[] clock = {0};
        PrefixIndex index = new PrefixIndex(new PrefixIndexConfig(1_000_000, 1_000_000, maxBytes), () -> ++clock[0]);
        int workers = 200;
        for (int w = 0; w < workers; w++) {
            index.insert(key(w, 1000), "w" + w); // 4 KB of keys each: 800 KB in all without the bound
            assertThat(index.stats().estimatedBytes()).as("after worker %d", w).isLessThanOrEqualTo(maxBytes);
        }
        PrefixIndexStats stats = index.stats();
        assertThat(stats.evictedElements()).isPositive();
        // The newest worker kept its whole key; the oldest lost its everything, although neither was near its capacity.
        assertThat(index.match(key(workers - 1, 1000)).matchedLength("w" + (workers - 1))).isEqualTo(1000);
        assertThat(index.match(key(0, 1000)).matchedLength("w0")).isZero();
        // Touching an old key makes it recent: it survives the next eviction round, others go.
        index.insert(key(workers - 10, 1000), "w" + (workers - 10));
        for (int w = workers; w < workers + 10; w++) { // the bound holds about 15 keys: w190 is the 11th newest
            index.insert(key(w, 1000), "w" + w);
        }
        assertThat(index.match(key(workers - 10, 1000)).matchedLength("w" + (workers - 10))).isEqualTo(1000);
        assertThat(index.match(key(workers - 9, 1000)).matchedLength("w" + (workers - 9))).isZero();
    }

    @Test
    void defaultBound_isAnEighthOfTheHeap() {
        assertThat(PrefixIndexConfig.defaults().maxBytes()).isEqualTo(Runtime.getRuntime().maxMemory() / 8);
    }
}
