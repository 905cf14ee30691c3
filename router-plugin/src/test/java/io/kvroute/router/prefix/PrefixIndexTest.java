package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PrefixIndexTest {
    private final AtomicLong clock = new AtomicLong();
    private final AtomicLong clockReads = new AtomicLong();

    private PrefixIndex index(PrefixIndexConfig config) {
        return new PrefixIndex(config, () -> {
            clockReads.incrementAndGet();
            return clock.incrementAndGet();
        });
    }

    private static int[] key(String text) {
        return KeyBuilder.codePoints(text);
    }

    @Test
    void match_reportsHowDeepEachWorkersOwnedPrefixGoes() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("abcdef"), "w1");
        index.insert(key("abcxyz"), "w2");
        index.insert(key("ab"), "w3");

        PrefixMatch m = index.match(key("abcdeQ"));

        assertThat(m.keyLength()).isEqualTo(6);
        assertThat(m.matchedByWorker()).isEqualTo(Map.of("w1", 5, "w2", 3, "w3", 2));
        assertThat(m.matchRatio("w1")).isEqualTo(5.0 / 6);
        assertThat(m.matchedLength("absent")).isZero();
        assertThat(m.bestWorker()).isEqualTo("w1");
        assertThat(index.match(new int[0]).matchRatio("w1")).isZero();
        PrefixIndexInvariants.check(index);
    }

    @Test
    void match_neverChangesOwnershipOrTicks() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("hello world"), "w1");
        index.insert(key("hello there"), "w2");
        var before = PrefixIndexInvariants.expand(index);

        index.match(key("hello world"));
        index.match(key("hello"));

        assertThat(PrefixIndexInvariants.expand(index)).isEqualTo(before);
    }

    @Test
    void insert_readsTheClockOncePerInsert() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("abcdef"), "w1");
        index.insert(key("abcxyz"), "w1");
        index.insert(key("abcxyz"), "w2");

        assertThat(clockReads.get()).isEqualTo(3);
    }

    @Test
    void insert_splitsAtDivergenceAndAtTheInsertsEnd() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("abcdef"), "w1");
        assertThat(index.stats().nodes()).isEqualTo(1);

        index.insert(key("abcxyz"), "w1"); // divergence: "abc" + {"def", "xyz"}
        assertThat(index.stats().nodes()).isEqualTo(3);

        index.insert(key("ab"), "w2"); // insert end inside "abc": "ab" + "c"
        assertThat(index.stats().nodes()).isEqualTo(4);
        assertThat(index.stats().elements()).isEqualTo(9);
        PrefixIndexInvariants.check(index);
    }

    @Test
    void insert_appendOnlyChatStaysASingleEdge() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        StringBuilder chat = new StringBuilder();
        for (int turn = 0; turn < 50; turn++) {
            chat.append("turn ").append(turn).append(". ");
            index.insert(key(chat.toString()), "w1");
            assertThat(index.stats().nodes()).isEqualTo(1);
        }
        assertThat(index.match(key(chat.toString())).matchedLength("w1")).isEqualTo(chat.length());
        PrefixIndexInvariants.check(index);
    }

    @Test
    void capacity_evictsTheLeastRecentlyUsedLeafFirstAndTrimsAPartialEdge() {
        PrefixIndex index = index(PrefixIndexConfig.withPerWorkerCapacity(10));
        index.insert(key("aaaaxx"), "w1");  // 6 elements, oldest branch "xx"
        index.insert(key("aaaayy"), "w1");  // +2 -> 8
        index.insert(key("zzz"), "w1");     // +3 -> 11 > 10: evict one element of the oldest leaf

        assertThat(index.match(key("aaaaxx")).matchedLength("w1")).isEqualTo(5);
        assertThat(index.match(key("aaaayy")).matchedLength("w1")).isEqualTo(6);
        assertThat(index.stats().ownedElements("w1")).isEqualTo(10);
        assertThat(index.stats().evictedElements()).isEqualTo(1);

        // Drops "x" (tick 1), then "yy" (tick 2); "aaaa" (tick 2) is now a leaf older than "zzz"
        // (tick 3), so it is trimmed to "aa": character-level LRU, leaf to root.
        index.setWorkerCapacity("w1", 5);
        assertThat(index.match(key("aaaaxx")).matchedLength("w1")).isEqualTo(2);
        assertThat(index.match(key("aaaayy")).matchedLength("w1")).isEqualTo(2);
        assertThat(index.match(key("zzz")).matchedLength("w1")).isEqualTo(3);
        assertThat(index.stats().nodes()).isEqualTo(2);
        PrefixIndexInvariants.check(index);
    }

    @Test
    void capacity_evictsOnlyTheOverCapacityWorkersOwnership() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("shared prefix"), "w1");
        index.insert(key("shared prefix"), "w2");

        index.setWorkerCapacity("w1", 6);

        assertThat(index.match(key("shared prefix")).matchedByWorker()).isEqualTo(Map.of("w1", 6, "w2", 13));
        assertThat(index.stats().nodes()).isEqualTo(2);
        PrefixIndexInvariants.check(index);
    }

    @Test
    void nodeCap_removesTheLeafWithTheOldestAccessFirst() {
        PrefixIndex index = index(new PrefixIndexConfig(1_000, 3));
        index.insert(key("root-a"), "w1");
        index.insert(key("root-b"), "w2");
        index.insert(key("root-a"), "w1"); // refresh "a": "b" is now the oldest leaf
        index.insert(key("root-c"), "w3"); // 4 nodes > 3

        assertThat(index.stats().nodes()).isEqualTo(3);
        // Only the leaf "b" went; w2 still owns the shared "root-".
        assertThat(index.match(key("root-b")).matchedByWorker()).isEqualTo(Map.of("w1", 5, "w2", 5, "w3", 5));
        assertThat(index.match(key("root-a")).matchedLength("w1")).isEqualTo(6);
        assertThat(index.stats().evictedNodes()).isEqualTo(1);
        PrefixIndexInvariants.check(index);
    }

    @Test
    void removeWorker_forgetsItEverywhereAndPrunesWhatNobodyElseOwns() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("common/one"), "w1");
        index.insert(key("common/two"), "w2");
        index.insert(key("common/one/more"), "w2");

        index.removeWorker("w2");

        assertThat(index.match(key("common/one/more")).matchedByWorker()).isEqualTo(Map.of("w1", 10));
        assertThat(index.stats().nodes()).isEqualTo(1); // pruned and merged back into one edge
        assertThat(index.stats().ownedElementsByWorker()).containsOnlyKeys("w1");
        PrefixIndexInvariants.check(index);
    }

    @Test
    void deepPath_ofMoreThan5000SampledKeysInsertsMatchesAndEvictsWithoutRecursion() {
        String text = "x".repeat(5_001 * 512);
        int[] sampled = KeyBuilder.sampled(text, 512);
        assertThat(sampled).hasSize(5_001);
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(sampled, "w1");
        assertThat(index.match(sampled).matchedLength("w1")).isEqualTo(5_001);

        // Worst case for depth: every element branches, giving a 5,001-node chain.
        int[] key = new int[5_001];
        for (int i = 0; i < key.length; i++) {
            key[i] = 'a';
            int[] branch = Arrays.copyOf(key, i + 1);
            branch[i] = 'b';
            index.insert(branch, "w2");
        }
        index.insert(key, "w2");
        assertThat(index.stats().nodes()).isGreaterThan(5_000);
        assertThat(index.match(key).matchedLength("w2")).isEqualTo(5_001);
        PrefixIndexInvariants.check(index);

        index.setWorkerCapacity("w2", 100);
        PrefixIndexInvariants.check(index);
        index.removeWorker("w2");
        assertThat(index.stats().nodes()).isEqualTo(1);
        PrefixIndexInvariants.check(index);
    }

    @Test
    void tenMillionElementKey_insertsMatchesSplitsAndRemoves() {
        int[] key = new int[10_000_000];
        for (int i = 0; i < key.length; i++) {
            key[i] = i % 1_000; // too wide for byte edges
        }
        PrefixIndex index = index(PrefixIndexConfig.withPerWorkerCapacity(Long.MAX_VALUE));
        index.insert(key, "w1");
        int[] divergent = key.clone();
        divergent[6_000_000] = -1;
        index.insert(divergent, "w2");

        assertThat(index.match(key).matchedByWorker()).isEqualTo(Map.of("w1", 10_000_000, "w2", 6_000_000));
        assertThat(index.stats().elements()).isEqualTo(14_000_000);
        index.removeWorker("w1");
        assertThat(index.stats().nodes()).isEqualTo(1);
        assertThat(index.match(divergent).matchedLength("w2")).isEqualTo(10_000_000);
    }

    @Test
    void nonBmpAndLatin1EdgesCompareAndMergeAcrossStorageWidths() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("café"), "w1");      // fits bytes
        index.insert(key("café😀x"), "w1");   // tail needs ints; merges into one edge
        assertThat(index.stats().nodes()).isEqualTo(1);
        assertThat(index.match(key("café😀y")).matchedLength("w1")).isEqualTo(5);
        assertThat(index.match(key("café😁")).matchedLength("w1")).isEqualTo(4);
        PrefixIndexInvariants.check(index);
    }

    @Test
    void insertMatched_reusesTheWalkAndFallsBackWhenTheShapeChanged() {
        PrefixIndex index = index(PrefixIndexConfig.defaults());
        index.insert(key("abcdef"), "w1");
        PrefixMatch fresh = index.match(key("abcxyz"));
        index.insertMatched(fresh, "w2");
        assertThat(index.match(key("abcxyz")).matchedByWorker()).isEqualTo(Map.of("w1", 3, "w2", 6));

        PrefixMatch stale = index.match(key("abcdQQ"));
        index.insert(key("abcdeZ"), "w3"); // splits "def": the stale walk no longer describes the tree
        index.insertMatched(stale, "w3");
        assertThat(index.match(key("abcdQQ")).matchedByWorker()).isEqualTo(Map.of("w1", 4, "w2", 3, "w3", 6));
        assertThat(clockReads.get()).isEqualTo(4);
        PrefixIndexInvariants.check(index);
    }
}
