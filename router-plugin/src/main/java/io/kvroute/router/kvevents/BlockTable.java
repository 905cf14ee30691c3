package io.kvroute.router.kvevents;

import static io.kvroute.router.kvevents.BlockCells.ROOT;
import static io.kvroute.router.kvevents.BlockCells.SATURATED;
import static io.kvroute.router.kvevents.BlockCells.keyOf;

import java.util.Arrays;

/**
 * A map from a 64-bit block hash to the set of publisher slots holding that block, with each
 * block's parent, written by ONE thread and read by any number of threads without locks. The
 * arrays are one {@link BlockCells} generation; the match is {@link ChainMatcher}.
 *
 * <p><b>Why parents.</b> A slot is <em>clean</em> when its held set is prefix-closed: every block it
 * holds has its parent held too (or starts a chain). An engine's cache is prefix-closed between
 * events (SGLang's radix cache evicts leaves; vLLM frees tail blocks first), and for a clean slot
 * "holds block d of the request" is monotone in d, so the match may search it in a few rounds of
 * probes ({@link ChainMatcher}) instead of walking every block. A slot that may hold a block
 * without its parent is <em>dirty</em> and is walked block by block, which is exact always.
 *
 * <p><b>Tracking holes exactly.</b> Per slot, {@code orphans} counts the blocks it holds whose
 * parent it does not hold; per cell and slot a 2-bit count of the cell's children that slot holds
 * tells how a store or removal changes that number (storing x: +1 if x's parent is missing, minus
 * x's held children that stop being orphans; removing x: the reverse). A slot is dirty exactly
 * while its orphans are above zero, so a transient hole (a chain removed root first, a child stored
 * before its parent) cleans itself with no scan. A count that reached 3 becomes sticky (it can no
 * longer be decremented exactly); a change that depends on a sticky count makes the slot
 * <em>unknown</em> (dirty) until {@link #revalidate} recounts the whole table. Every stated parent
 * gets a cell (a placeholder nobody holds, if need be) so its count has a home.
 *
 * <p><b>Parents are trusted once.</b> The engine's hash is chained from the parent's, so honest
 * publishers state the same parent for a hash. A store that states another parent than the
 * recorded one (a collision, or a broken publisher) marks the table disputed: every slot stays dirty
 * (walked, exact) for the table's life, so a liar cannot make another slot's answer wrong.
 *
 * <p><b>Concurrency.</b> A new cell's owners are written before its key (release); readers load the
 * key with acquire. Owner bits change with opaque stores. A slot's dirty bit is set (volatile store
 * and a release fence) BEFORE the owner store that may create a hole, and cleared (volatile store)
 * only AFTER the stores that close it; readers load the dirty bits with acquire before probing. A
 * read racing an event may see it partly applied, as with any concurrent reader of a cache. A
 * rebuild (grow, more mask words) fills new arrays, recounts them and publishes them through one
 * volatile field, so a reader uses one consistent generation per call.
 */
final class BlockTable {
    private static final int MIN_CAPACITY = 1024;

    private volatile BlockCells cells = new BlockCells(MIN_CAPACITY, 1);
    // writer only
    private int used;
    private int live;
    private int[] orphans = new int[Long.SIZE];
    private boolean[] unknown = new boolean[Long.SIZE];
    private boolean anyUnknown;
    private boolean disputed;

    /** Number of blocks with at least one owner. */
    int liveBlocks() {
        return live;
    }

    /** Bytes held by the arrays (for the memory gauge). */
    long bytes() {
        return cells.bytes();
    }

    /** True once two stores stated different parents for one hash (every slot walks for good). */
    boolean disputed() {
        return disputed;
    }

    /** True when some slot is unknown and a {@link #revalidate} would help. */
    boolean needsRevalidation() {
        return anyUnknown;
    }

    /** Blocks {@code slot} holds without their parent, exact unless {@link #unknown}. Writer only (tests). */
    int orphans(int slot) {
        return slot < orphans.length ? orphans[slot] : 0;
    }

    /** True when a sticky count left {@code slot}'s orphans unknown until a revalidation. Writer only (tests). */
    boolean unknown(int slot) {
        return slot < unknown.length && unknown[slot];
    }

    /** True when the match may search {@code slot} instead of walking it. Writer thread (or a quiescent test). */
    boolean isClean(int slot) {
        BlockCells c = cells;
        return slot >= c.words * Long.SIZE || !c.isDirty(slot);
    }

    /**
     * Sets {@code slot}'s bit on {@code hash}, whose parent is {@code parentKey} ({@link
     * BlockCells#ROOT} for a chain's first block; in key form, see {@link BlockCells#keyOf}).
     * True when the bit was not set. Writer only.
     */
    boolean add(long hash, long parentKey, int slot) {
        long key = keyOf(hash);
        BlockCells c = cells;
        if (slot >= c.words * Long.SIZE) {
            c = rebuild(c.capacity(), slot / Long.SIZE + 1);
        }
        if ((used + 2) * 10L > c.capacity() * 6L) {
            c = rebuild(live * 10L > c.capacity() * 3L ? c.capacity() * 2L : c.capacity(), c.words);
        }
        if (parentKey == key) {
            dispute(c); // a block cannot be its own parent
        }
        int p = -1;
        if (parentKey != ROOT && parentKey != key) {
            p = c.find(parentKey);
            if (c.key(p) == 0) {
                c.insert(p, parentKey, parentKey, -1); // placeholder: holds the parent's child counts
                used++;
            }
        }
        int i = c.find(key);
        boolean fresh = c.key(i) == 0;
        if (!fresh) {
            long recorded = c.parent(i);
            if (recorded == key) {
                c.setParent(i, parentKey); // a placeholder learns its parent
            } else if (recorded != parentKey) {
                dispute(c);
            }
            if (c.owned(i, slot)) {
                return false;
            }
        }
        int delta = 0;
        if (!disputed) {
            if (p >= 0) {
                if (!c.owned(p, slot)) {
                    delta++;
                }
                int pc = c.childCount(p, slot);
                if (pc < SATURATED) {
                    c.setChildCount(p, slot, pc + 1);
                }
            }
            if (!fresh) {
                delta -= heldChildren(c, i, slot);
            }
        }
        boolean dirtyAfter = dirtyAfter(slot, delta);
        if (dirtyAfter) {
            c.setDirty(slot, true);
        }
        if (fresh) {
            c.insert(i, key, parentKey, slot);
            used++;
            live++;
        } else {
            if (!c.ownedByAny(i)) {
                live++;
            }
            c.setOwned(i, slot, true);
        }
        orphans[slot] += delta;
        c.setDirty(slot, dirtyAfter);
        return true;
    }

    /** Clears {@code slot}'s bit on {@code hash}; true when it was set. Writer only. */
    boolean remove(long hash, int slot) {
        long key = keyOf(hash);
        BlockCells c = cells;
        if (slot >= c.words * Long.SIZE) {
            return false;
        }
        int i = c.find(key);
        if (c.key(i) == 0 || !c.owned(i, slot)) {
            return false;
        }
        int delta = 0;
        if (!disputed) {
            long parent = c.parent(i);
            if (parent != ROOT && parent != key) {
                int p = c.find(parent);
                if (c.key(p) == 0) {
                    markUnknown(slot); // every stated parent has a cell; cannot happen
                } else {
                    if (!c.owned(p, slot)) {
                        delta--; // x was an orphan
                    }
                    int pc = c.childCount(p, slot);
                    if (pc > 0 && pc < SATURATED) {
                        c.setChildCount(p, slot, pc - 1);
                    }
                }
            }
            delta += heldChildren(c, i, slot);
        }
        boolean dirtyAfter = dirtyAfter(slot, delta);
        if (dirtyAfter) {
            c.setDirty(slot, true);
        }
        c.setOwned(i, slot, false);
        if (!c.ownedByAny(i)) {
            live--;
        }
        orphans[slot] += delta;
        c.setDirty(slot, dirtyAfter);
        return true;
    }

    /** Clears {@code slot} everywhere; returns how many blocks it held. Writer only; scans the table. */
    int clearSlot(int slot) {
        BlockCells c = cells;
        if (slot >= c.words * Long.SIZE) {
            return 0;
        }
        c.setDirty(slot, true);
        int cleared = 0;
        for (int i = 0; i <= c.mask; i++) {
            if (c.key(i) == 0) {
                continue;
            }
            c.setChildCount(i, slot, 0);
            if (c.owned(i, slot)) {
                c.setOwned(i, slot, false);
                cleared++;
                if (!c.ownedByAny(i)) {
                    live--;
                }
            }
        }
        orphans[slot] = 0;
        if (unknown[slot]) {
            unknown[slot] = false;
            anyUnknown = false;
            for (boolean u : unknown) {
                anyUnknown |= u;
            }
        }
        c.setDirty(slot, disputed);
        return cleared;
    }

    /**
     * Recounts the child counts and orphans of every unknown slot from the owners and parents (one
     * scan, one parent probe per block an unknown slot holds) and republishes their dirty bits:
     * afterwards such a slot is dirty exactly when it holds a block without its parent (or the table
     * is disputed). Other slots' counts are exact or sticky already and stay. Writer only.
     */
    void revalidate() {
        if (!anyUnknown) {
            return;
        }
        BlockCells c = cells;
        long[] which = new long[c.words];
        for (int s = 0; s < unknown.length && s < c.words * Long.SIZE; s++) {
            if (unknown[s]) {
                which[s >>> 6] |= 1L << (s & 63);
            }
        }
        recount(c, which);
    }

    /** Per slot, the leading hashes it holds consecutively; returns the probes made. Any thread. */
    int match(long[] hashes, int[] matched) {
        return ChainMatcher.match(cells, hashes, matched);
    }

    /** The children of cell {@code i} that {@code slot} holds; a sticky count makes the slot unknown. */
    private int heldChildren(BlockCells c, int i, int slot) {
        int cc = c.childCount(i, slot);
        if (cc == SATURATED) {
            markUnknown(slot);
            return 0;
        }
        return cc;
    }

    private boolean dirtyAfter(int slot, int delta) {
        return disputed || unknown[slot] || orphans[slot] + delta > 0;
    }

    private void markUnknown(int slot) {
        unknown[slot] = true;
        anyUnknown = true;
    }

    private void dispute(BlockCells c) {
        if (!disputed) {
            disputed = true;
            for (int s = 0; s < c.words * Long.SIZE; s++) {
                c.setDirty(s, true);
            }
        }
    }

    /**
     * Recomputes the child counts, orphans and dirty bits of the slots in {@code which} (a mask of
     * {@code c.words} words), inserting a placeholder for a missing parent; the other slots' state
     * is kept.
     */
    private void recount(BlockCells c, long[] which) {
        int slots = c.words * Long.SIZE;
        int[] counted = new int[slots];
        for (int i = 0; i <= c.mask; i++) {
            if (c.key(i) != 0) {
                c.clearChildCounts(i, which);
            }
        }
        for (int i = 0; i <= c.mask; i++) {
            long key = c.key(i);
            if (key == 0) {
                continue;
            }
            long parent = c.parent(i);
            if (parent == ROOT || parent == key || !c.ownedByAny(i, which)) {
                continue;
            }
            int p = c.find(parent);
            if (c.key(p) == 0) {
                c.insert(p, parent, parent, -1);
                used++;
            }
            for (int w = 0; w < c.words; w++) {
                long own = c.ownerWord(i, w) & which[w];
                for (long bits = own; bits != 0; bits &= bits - 1) {
                    int slot = (w << 6) + Long.numberOfTrailingZeros(bits);
                    int pc = c.childCount(p, slot);
                    if (pc < SATURATED) {
                        c.setChildCount(p, slot, pc + 1);
                    }
                }
                for (long bits = own & ~c.ownerWord(p, w); bits != 0; bits &= bits - 1) {
                    counted[(w << 6) + Long.numberOfTrailingZeros(bits)]++;
                }
            }
        }
        if (orphans.length < slots) {
            orphans = Arrays.copyOf(orphans, slots);
            unknown = Arrays.copyOf(unknown, slots);
        }
        anyUnknown = false;
        for (int s = 0; s < slots; s++) {
            if ((which[s >>> 6] & (1L << (s & 63))) != 0) {
                orphans[s] = counted[s];
                unknown[s] = false;
            }
            anyUnknown |= unknown[s];
            c.setDirty(s, disputed || unknown[s] || orphans[s] > 0);
        }
    }

    /**
     * An upper bound on the placeholders a recount of {@code old}'s held entries will insert: one
     * per parent that nobody holds. Each such parent has a held child that is an orphan in its
     * holder, so while every slot's orphan count is exact their sum bounds it with no scan (the
     * rebuild's recount then makes one parent probe per held block, not two);
     * otherwise one probe per held block finds them.
     */
    private long parentsToInsert(BlockCells old) {
        if (!disputed && !anyUnknown) {
            long sum = 0;
            for (int n : orphans) {
                sum += n;
            }
            return Math.min(sum, live); // distinct parents have distinct orphan children
        }
        long needed = 0;
        for (int i = 0; i <= old.mask; i++) {
            if (old.key(i) != 0 && old.ownedByAny(i)) {
                long parent = old.parent(i);
                if (parent != ROOT && parent != old.key(i)) {
                    int p = old.find(parent);
                    if (old.key(p) == 0 || !old.ownedByAny(p)) {
                        needed++;
                    }
                }
            }
        }
        return needed;
    }

    /** Copies held entries into fresh arrays (dropping tombstones), recounts and publishes them. */
    private BlockCells rebuild(long minCapacity, int words) {
        BlockCells old = cells;
        long parentsNeeded = parentsToInsert(old);
        int capacity = MIN_CAPACITY;
        while (capacity < minCapacity || (live + parentsNeeded) * 10L > capacity * 5L) {
            capacity <<= 1;
        }
        BlockCells fresh = new BlockCells(capacity, words);
        int count = 0;
        for (int i = 0; i <= old.mask; i++) {
            if (old.key(i) != 0 && old.ownedByAny(i)) {
                fresh.copyCell(fresh.find(old.key(i)), old, i);
                count++;
            }
        }
        used = count;
        live = count;
        long[] all = new long[words];
        Arrays.fill(all, -1L);
        recount(fresh, all);
        cells = fresh;
        return fresh;
    }
}
