package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Which path a slot's match takes, seen through the probe count {@link BlockTable#match} returns
 * (never through timing): a clean slot is bisected in about log2(chain) probes, a dirty one walked
 * block by block; holes open and close with the events that make them, a sticky count waits for a
 * revalidation, and a disputed parent keeps every slot walked. The answers themselves are the
 * model test's business ({@link BlockIndexModelTest}); here they are checked on the way.
 */
class BlockTableTest {
    private static final int N = 8192;
    /** One probe for block 0, then at most two bisections of 8,192 blocks (log2 = 13) and slack. */
    private static final int BISECTION_PROBES = 1 + 2 * 14;

    private final long[] chain = chain(new SplittableRandom(3), N);

    @Test
    void cleanSlots_areBisected_inLogarithmicProbes() {
        BlockTable t = new BlockTable();
        store(t, 0, chain, 0, N);
        store(t, 1, chain, 0, 100);
        int[] matched = new int[2];
        int probes = t.match(chain, matched);
        assertThat(matched).containsExactly(N, 100);
        assertThat(t.isClean(0)).isTrue();
        assertThat(t.isClean(1)).isTrue();
        assertThat(probes).isLessThanOrEqualTo(BISECTION_PROBES);
    }

    @Test
    void middleRemoval_dirtiesTheSlot_whichIsWalked_untilTheBlockComesBack() {
        BlockTable t = new BlockTable();
        store(t, 0, chain, 0, N);
        t.remove(chain[4000], 0);
        assertThat(t.isClean(0)).isFalse();
        assertThat(t.orphans(0)).isEqualTo(1);
        int[] matched = new int[1];
        int probes = t.match(chain, matched);
        assertThat(matched[0]).isEqualTo(4000);
        assertThat(probes).isEqualTo(1 + 4000); // block 0, then blocks 1..4000 until the hole

        t.add(chain[4000], BlockCells.keyOf(chain[3999]), 0);
        assertThat(t.isClean(0)).isTrue(); // closed by the event itself, no revalidation
        probes = t.match(chain, matched);
        assertThat(matched[0]).isEqualTo(N);
        assertThat(probes).isLessThanOrEqualTo(BISECTION_PROBES);
    }

    /** Short enough that no rebuild (which recounts everything) hides a missed orphan. */
    @Test
    void childStoredBeforeItsParent_isDirtyUntilTheParentArrives() {
        BlockTable t = new BlockTable();
        long[] request = Arrays.copyOf(chain, 500);
        store(t, 0, request, 10, 500);
        assertThat(t.isClean(0)).isFalse();
        int[] matched = new int[1];
        t.match(request, matched);
        assertThat(matched[0]).isZero();
        store(t, 0, request, 0, 10);
        assertThat(t.isClean(0)).isTrue();
        assertThat(t.match(request, matched)).isLessThanOrEqualTo(BISECTION_PROBES);
        assertThat(matched[0]).isEqualTo(500);
    }

    @Test
    void chainRemovedRootFirst_isDirtyOnlyWhileTheEventRuns() {
        BlockTable t = new BlockTable();
        store(t, 0, chain, 0, 64);
        for (int i = 32; i < 64; i++) {
            t.remove(chain[i], 0);
            assertThat(t.isClean(0)).as("after removing block %d", i).isEqualTo(i == 63);
        }
        int[] matched = new int[1];
        assertThat(t.match(chain, matched)).isLessThanOrEqualTo(BISECTION_PROBES);
        assertThat(matched[0]).isEqualTo(32);
    }

    /**
     * A block that once had three children in the slot keeps a sticky count: removing it after its
     * children (prefix-closed all along) leaves the slot unknown, hence walked, until the index's
     * maintenance revalidates it, at most once per interval.
     */
    @Test
    void stickyChildCount_leavesTheSlotUnknown_untilARateLimitedRevalidation() {
        BlockIndex index = new BlockIndex(Integer.MAX_VALUE);
        BlockIndex.Key key = new BlockIndex.Key("m", -1, 16);
        long[] branches = chain(new SplittableRandom(5), 3);
        index.store(key, 0, chain);
        for (long b : branches) {
            index.store(key, 0, true, chain[N - 1], new long[] {b});
        }
        index.remove(0, branches);
        BlockTable t = index.table(key);
        assertThat(t.isClean(0)).isTrue();
        index.remove(0, new long[] {chain[N - 1]});
        assertThat(t.unknown(0)).isTrue();
        assertThat(t.isClean(0)).isFalse();
        int[] matched = new int[1];
        assertThat(t.match(chain, matched)).isEqualTo(N); // walked: block 0, then 1..N-1
        assertThat(matched[0]).isEqualTo(N - 1);

        long start = 5_000_000_000L;
        index.maintain(start);
        assertThat(t.isClean(0)).isTrue();
        assertThat(t.match(chain, matched)).isLessThanOrEqualTo(BISECTION_PROBES);
        assertThat(matched[0]).isEqualTo(N - 1);

        // a second sticky count inside the interval waits for it
        index.store(key, 0, true, chain[N - 2], new long[] {chain[N - 1]});
        for (long b : branches) {
            index.store(key, 0, true, chain[N - 1], new long[] {b});
        }
        index.remove(0, branches);
        index.remove(0, new long[] {chain[N - 1]});
        assertThat(t.unknown(0)).isTrue();
        index.maintain(start + BlockIndex.REVALIDATE_INTERVAL_NANOS - 1);
        assertThat(t.unknown(0)).isTrue();
        index.maintain(start + BlockIndex.REVALIDATE_INTERVAL_NANOS);
        assertThat(t.unknown(0)).isFalse();
        assertThat(t.isClean(0)).isTrue();
    }

    /** Slot 1 says block 5's parent is the root; slot 0 said block 4. Nobody is searched any more. */
    @Test
    void contradictoryParents_disputeTheTable_andEverySlotIsWalkedExactly() {
        BlockTable t = new BlockTable();
        store(t, 0, chain, 0, 100);
        store(t, 2, chain, 0, 50);
        t.add(chain[5], BlockCells.ROOT, 1);
        assertThat(t.disputed()).isTrue();
        assertThat(t.isClean(0)).isFalse();
        assertThat(t.isClean(2)).isFalse();
        int[] matched = new int[3];
        int probes = t.match(Arrays.copyOf(chain, 100), matched);
        assertThat(matched).containsExactly(100, 0, 50);
        assertThat(probes).isEqualTo(100); // block 0, then walked to the end
        t.revalidate();
        assertThat(t.isClean(0)).isFalse();
    }

    @Test
    void growthAndMoreSlots_keepTheDirtyBits() {
        BlockTable t = new BlockTable();
        store(t, 0, chain, 0, N);
        t.remove(chain[10], 0);
        store(t, 100, chain, 0, N); // a second mask word: a rebuild that recounts
        assertThat(t.isClean(0)).isFalse();
        assertThat(t.isClean(100)).isTrue();
        int[] matched = new int[101];
        t.match(chain, matched);
        assertThat(matched[0]).isEqualTo(10);
        assertThat(matched[100]).isEqualTo(N);
    }

    private static void store(BlockTable t, int slot, long[] chain, int from, int to) {
        for (int i = from; i < to; i++) {
            t.add(chain[i], i == 0 ? BlockCells.ROOT : BlockCells.keyOf(chain[i - 1]), slot);
        }
    }

    private static long[] chain(SplittableRandom rnd, int n) {
        long[] c = new long[n];
        for (int i = 0; i < n; i++) {
            c[i] = rnd.nextLong();
        }
        return c;
    }
}
