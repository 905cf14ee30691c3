package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Random operation sequences against {@link NaivePrefixModel}. After every operation the whole
 * expanded state (every owned prefix with each owner's tick, so LRU order too), the counters and
 * the matched depth of every worker are compared, and {@link PrefixIndexInvariants} are checked.
 */
class PrefixIndexFuzzTest {
    private static final int SEQUENCES = 10_000;
    private static final String[] WORKERS = {"w0", "w1", "w2"};
    /** ASCII, Latin-1 (still one byte), BMP CJK and non-BMP emoji: exercises byte and int edges. */
    private static final String[] ALPHABET = {"a", "b", "c", "é", "中", "😀", "𝄞"};
    private static final String[] STEMS = {"", "ab", "aba", "中😀a", "😀😀", "abcab"};

    @Test
    void randomSequences_matchNaiveModelAfterEveryOperation() {
        SplittableRandom seeds = new SplittableRandom(0x5eed_0004L);
        long operations = 0;
        for (int s = 0; s < SEQUENCES; s++) {
            long seed = seeds.nextLong();
            operations += runSequence(seed);
        }
        assertThat(operations).isGreaterThanOrEqualTo(SEQUENCES * 4L);
    }

    private static PrefixMatch match(PrefixIndex index, int[] key, boolean prefixKey) {
        return prefixKey ? index.match(PrefixKey.of(key)) : index.match(key);
    }

    private static int runSequence(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        long capacity = rnd.nextInt(4) == 0 ? 1_000 : 3 + rnd.nextInt(20);
        int maxNodes = rnd.nextInt(4) == 0 ? 1_000 : 2 + rnd.nextInt(10);
        // A quarter of the sequences bound the whole index's bytes (a few nodes' worth), across workers.
        long maxBytes = rnd.nextInt(4) == 0 ? 128L * (2 + rnd.nextInt(8)) + 4L * rnd.nextInt(20) : Long.MAX_VALUE;
        PrefixIndexConfig config = new PrefixIndexConfig(capacity, maxNodes, maxBytes);
        long[] clock = {0};
        // Half the sequences (by a seed bit, leaving the random stream unchanged) send every
        // multi-element compare through the unlocked walk path, including its partial-node reuse.
        int unlockedCompareMin = (seed & 1) == 0 ? 1 : PrefixIndex.UNLOCKED_COMPARE_MIN_ELEMENTS;
        PrefixIndex index = new PrefixIndex(config, () -> ++clock[0], unlockedCompareMin);
        // Another seed bit: keys go in as PrefixKey (byte form when every element fits, so byte
        // edges compare through the vectorized byte path) instead of int[].
        boolean pk = (seed & 2) == 0;
        NaivePrefixModel model = new NaivePrefixModel(config);
        boolean sampled = rnd.nextBoolean();
        int ops = 4 + rnd.nextInt(10);
        PrefixMatch stale = null;
        int[] staleKey = null;
        for (int op = 0; op < ops; op++) {
            int[] key = randomKey(rnd, sampled);
            if (rnd.nextInt(4) == 0) {
                staleKey = randomKey(rnd, sampled);
                stale = match(index, staleKey, pk);
            }
            String worker = WORKERS[rnd.nextInt(WORKERS.length)];
            int kind = rnd.nextInt(100);
            String what;
            if (kind < 55) {
                int how = rnd.nextInt(3);
                if (how == 2 && stale != null) { // a match taken some operations ago: shape changed
                    key = staleKey;
                    index.insertMatched(stale, worker);
                } else if (how == 1) {
                    index.insertMatched(match(index, key, pk), worker);
                } else if (pk) {
                    index.insert(PrefixKey.of(key), worker);
                } else {
                    index.insert(key, worker);
                }
                what = "insert#" + how + " " + java.util.Arrays.toString(key) + " " + worker;
                model.insert(key, worker, clock[0]);
            } else if (kind < 75) {
                what = "match";
            } else if (kind < 92) {
                long newCapacity = rnd.nextInt(12);
                what = "evict " + worker + " to " + newCapacity;
                index.setWorkerCapacity(worker, newCapacity);
                model.setCapacity(worker, newCapacity);
            } else {
                what = "remove " + worker;
                index.removeWorker(worker);
                model.removeWorker(worker);
            }
            String context = "seed " + seed + " op " + op + " (" + what + ")";
            assertThat(match(index, key, pk).matchedByWorker()).as(context).isEqualTo(model.match(key));
            int[] probe = randomKey(rnd, sampled);
            assertThat(match(index, probe, pk).matchedByWorker()).as(context).isEqualTo(model.match(probe));
            assertThat(PrefixIndexInvariants.expand(index)).as(context).isEqualTo(model.positions);
            PrefixIndexInvariants.check(index);
            PrefixIndexStats stats = index.stats();
            assertThat(stats.nodes()).as(context).isEqualTo(model.nodes());
            assertThat(stats.elements()).as(context).isEqualTo(model.elements());
            assertThat(stats.evictedElements()).as(context).isEqualTo(model.evictedElements);
            assertThat(stats.estimatedBytes()).as(context).isEqualTo(model.bytes()).isLessThanOrEqualTo(maxBytes);
            for (String w : WORKERS) {
                assertThat(stats.ownedElements(w)).as(context + " " + w).isEqualTo(model.owned(w));
            }
        }
        return ops;
    }

    private static int[] randomKey(SplittableRandom rnd, boolean sampled) {
        StringBuilder text = new StringBuilder(STEMS[rnd.nextInt(STEMS.length)]);
        int extra = rnd.nextInt(7);
        for (int i = 0; i < extra; i++) {
            text.append(ALPHABET[rnd.nextInt(ALPHABET.length)]);
        }
        return sampled ? KeyBuilder.sampled(text.toString(), 2) : KeyBuilder.codePoints(text.toString());
    }
}
