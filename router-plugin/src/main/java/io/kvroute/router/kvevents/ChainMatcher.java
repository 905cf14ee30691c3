package io.kvroute.router.kvevents;

/**
 * The lock-free match of a request's block chain against one {@link BlockCells} generation: per
 * slot, the number of leading hashes it holds consecutively from the first (an engine's own prefix
 * match stops at its first missing block).
 *
 * <p>Clean slots (prefix-closed, see {@link BlockTable}) are solved by bisection over the chain: for
 * such a slot "holds hash d" is true for every d below its depth and false from it on, so one probe
 * of the middle hash splits the slots still undecided into those matching past it and those
 * stopping at or before it. A group of slots with one depth costs about log2(chain length) probes
 * (13 for 8,192 blocks); k distinct depths cost about k times that. Dirty slots are walked block by
 * block, one probe per block until the last of them stops, which is exact for any held set.
 *
 * <p>The dirty bits are loaded (acquire) before any probe, and the writer sets a slot's bit before
 * the owner stores that may open a hole: a read that starts after the bit is set walks the slot. A
 * read racing an event may see it partly applied, as any reader racing the writer could before.
 *
 * <p>Bisection's probes are dependent loads. A search with 7 independent probes per round (8-way,
 * 5 rounds instead of 13) was tried and measured slower both warm (p50 2.1 us against 0.32 us) and
 * with flushed caches (p50 36 us against 29 us) on the 2-core VM, so the plain bisection stays.
 */
final class ChainMatcher {
    private ChainMatcher() {}

    /**
     * @param matched out: {@code matched[slot]} is set for every slot below its length that holds
     *     the first hash; others are left as they are
     * @return the table probes made (for tests: it shows which path a slot took)
     */
    static int match(BlockCells c, long[] hashes, int[] matched) {
        int n = hashes.length;
        if (n == 0) {
            return 0;
        }
        int words = c.words;
        long[] dirty = c.dirtySnapshot();
        long[] first = new long[words];
        if (!c.owners(hashes[0], first)) {
            return 1;
        }
        long[] fast = new long[words];
        long[] slow = new long[words];
        boolean anyFast = false;
        boolean anySlow = false;
        for (int w = 0; w < words; w++) {
            fast[w] = first[w] & ~dirty[w];
            slow[w] = first[w] & dirty[w];
            anyFast |= fast[w] != 0;
            anySlow |= slow[w] != 0;
        }
        int probes = 1;
        if (anyFast) {
            probes += bisect(c, hashes, 1, n, fast, matched);
        }
        if (anySlow) {
            probes += walk(c, hashes, slow, matched);
        }
        return probes;
    }

    /**
     * Every slot in {@code undecided} holds {@code hashes[0..lo)} and matches at most {@code hi}
     * (its held set being prefix-closed); decides each one's depth.
     */
    private static int bisect(BlockCells c, long[] hashes, int lo, int hi, long[] undecided, int[] matched) {
        if (lo == hi) {
            assign(undecided, lo, matched);
            return 0;
        }
        int mid = (lo + hi) >>> 1;
        long[] past = new long[c.words];
        c.owners(hashes[mid], past);
        boolean anyPast = false;
        boolean anyBefore = false;
        for (int w = 0; w < past.length; w++) {
            past[w] &= undecided[w];
            undecided[w] &= ~past[w];
            anyPast |= past[w] != 0;
            anyBefore |= undecided[w] != 0;
        }
        int probes = 1;
        if (anyPast) {
            probes += bisect(c, hashes, mid + 1, hi, past, matched);
        }
        if (anyBefore) {
            probes += bisect(c, hashes, lo, mid, undecided, matched);
        }
        return probes;
    }

    /** Walks the chain from block 1 for the slots in {@code alive}, which all hold block 0. */
    private static int walk(BlockCells c, long[] hashes, long[] alive, int[] matched) {
        int words = c.words;
        long[] next = new long[words];
        int probes = 0;
        for (int d = 1; d < hashes.length; d++) {
            boolean present = c.owners(hashes[d], next);
            probes++;
            boolean stillAny = false;
            for (int w = 0; w < words; w++) {
                long keep = present ? alive[w] & next[w] : 0;
                assignWord(w, alive[w] & ~keep, d, matched);
                alive[w] = keep;
                stillAny |= keep != 0;
            }
            if (!stillAny) {
                return probes;
            }
        }
        assign(alive, hashes.length, matched);
        return probes;
    }

    private static void assign(long[] slots, int depth, int[] matched) {
        for (int w = 0; w < slots.length; w++) {
            assignWord(w, slots[w], depth, matched);
        }
    }

    private static void assignWord(int w, long bits, int depth, int[] matched) {
        for (; bits != 0; bits &= bits - 1) {
            int slot = (w << 6) + Long.numberOfTrailingZeros(bits);
            if (slot < matched.length) {
                matched[slot] = depth;
            }
        }
    }
}
