package io.kvroute.router.kvevents;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One generation of a {@link BlockTable}'s arrays: an open-addressing map (linear probing from a
 * mixed hash) from a block key to its owners, its parent and its per-slot child counts.
 *
 * <p><b>Layout.</b> {@code heads} holds {@code [key, owner words...]} per cell, so a reader's probe
 * touches one cache line for key and owners. {@code links} holds {@code [parent, count-low words...,
 * count-high words...]} per cell and is read and written by the writer only: the parent key
 * ({@link #ROOT} for a chain's first block, the cell's own key while unknown), and per slot a 2-bit
 * count of the cell's children that slot holds (0, 1, 2 exact; 3 means "3 or more, or unknown after
 * a decrement", and stays 3 until a recount). {@code dirty} has one bit per slot: set when the slot
 * may hold a block without its parent (see {@link BlockTable}); readers load it with acquire.
 *
 * <p>Key 0 marks an empty cell, so a block whose hash is 0 is stored as 1 ({@link #keyOf}).
 */
final class BlockCells {
    static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    /** The parent of a chain's first block. */
    static final long ROOT = 0;
    /** A sticky child count: 3 or more, or unknown. */
    static final int SATURATED = 3;

    final long[] heads;
    final long[] links;
    final long[] dirty;
    final int words;
    final int mask;

    BlockCells(int capacity, int words) {
        this.heads = new long[capacity * (1 + words)];
        this.links = new long[capacity * (1 + 2 * words)];
        this.dirty = new long[words];
        this.words = words;
        this.mask = capacity - 1;
    }

    static long keyOf(long hash) {
        return hash == 0 ? 1 : hash;
    }

    int capacity() {
        return mask + 1;
    }

    long bytes() {
        return ((long) heads.length + links.length + dirty.length) * Long.BYTES;
    }

    // ---- reader side (any thread) ----

    /** The cell of {@code key}, or -1. The key is loaded with acquire, so the cell's owners are there. */
    int lookup(long key) {
        int stride = 1 + words;
        int i = (int) mix(key) & mask;
        while (true) {
            long k = (long) LONGS.getAcquire(heads, i * stride);
            if (k == key) {
                return i;
            }
            if (k == 0) {
                return -1;
            }
            i = (i + 1) & mask;
        }
    }

    /** Loads the owners of {@code hash} into {@code out}; false when nobody holds it. One probe. */
    boolean owners(long hash, long[] out) {
        int i = lookup(keyOf(hash));
        if (i < 0) {
            return false;
        }
        int at = i * (1 + words) + 1;
        boolean any = false;
        for (int w = 0; w < words; w++) {
            long v = (long) LONGS.getOpaque(heads, at + w);
            out[w] = v;
            any |= v != 0;
        }
        return any;
    }

    /** The dirty bits as a reader sees them at the start of a match. */
    long[] dirtySnapshot() {
        long[] d = new long[words];
        for (int w = 0; w < words; w++) {
            d[w] = (long) LONGS.getAcquire(dirty, w);
        }
        return d;
    }

    // ---- writer side ----

    /** The cell of {@code key} or the empty cell where it would go. Writer only (plain reads). */
    int find(long key) {
        int stride = 1 + words;
        int i = (int) mix(key) & mask;
        while (heads[i * stride] != 0 && heads[i * stride] != key) {
            i = (i + 1) & mask;
        }
        return i;
    }

    long key(int i) {
        return heads[i * (1 + words)];
    }

    /**
     * Publishes a new cell: owners and links first, then the key with release, so a reader that
     * sees the key sees its owners. {@code ownerSlot} < 0 inserts a placeholder nobody holds.
     */
    void insert(int i, long key, long parent, int ownerSlot) {
        links[i * (1 + 2 * words)] = parent;
        if (ownerSlot >= 0) {
            heads[i * (1 + words) + 1 + (ownerSlot >>> 6)] = 1L << (ownerSlot & 63);
        }
        LONGS.setRelease(heads, i * (1 + words), key);
    }

    /** Copies cell {@code from} of {@code old} (key, owners, parent; not the counts) into unpublished cell {@code i}. */
    void copyCell(int i, BlockCells old, int from) {
        heads[i * (1 + words)] = old.key(from);
        System.arraycopy(old.heads, from * (1 + old.words) + 1, heads, i * (1 + words) + 1, old.words);
        links[i * (1 + 2 * words)] = old.parent(from);
    }

    boolean owned(int i, int slot) {
        return (heads[i * (1 + words) + 1 + (slot >>> 6)] & (1L << (slot & 63))) != 0;
    }

    boolean ownedByAny(int i) {
        int at = i * (1 + words) + 1;
        for (int w = 0; w < words; w++) {
            if (heads[at + w] != 0) {
                return true;
            }
        }
        return false;
    }

    /** True when a slot in {@code which} holds cell {@code i}. */
    boolean ownedByAny(int i, long[] which) {
        int at = i * (1 + words) + 1;
        for (int w = 0; w < words; w++) {
            if ((heads[at + w] & which[w]) != 0) {
                return true;
            }
        }
        return false;
    }

    long ownerWord(int i, int w) {
        return heads[i * (1 + words) + 1 + w];
    }

    /** Sets or clears one owner bit with an opaque store (a reader sees it old or new). */
    void setOwned(int i, int slot, boolean owned) {
        int at = i * (1 + words) + 1 + (slot >>> 6);
        long bit = 1L << (slot & 63);
        long old = heads[at];
        LONGS.setOpaque(heads, at, owned ? old | bit : old & ~bit);
    }

    long parent(int i) {
        return links[i * (1 + 2 * words)];
    }

    void setParent(int i, long parent) {
        links[i * (1 + 2 * words)] = parent;
    }

    int childCount(int i, int slot) {
        int at = i * (1 + 2 * words) + 1 + (slot >>> 6);
        int b = slot & 63;
        return (int) (((links[at] >>> b) & 1) | (((links[at + words] >>> b) & 1) << 1));
    }

    void setChildCount(int i, int slot, int count) {
        int at = i * (1 + 2 * words) + 1 + (slot >>> 6);
        long bit = 1L << (slot & 63);
        links[at] = (count & 1) != 0 ? links[at] | bit : links[at] & ~bit;
        links[at + words] = (count & 2) != 0 ? links[at + words] | bit : links[at + words] & ~bit;
    }

    /** Zeroes the child counts of one cell for the slots in {@code which}. */
    void clearChildCounts(int i, long[] which) {
        int at = i * (1 + 2 * words) + 1;
        for (int w = 0; w < words; w++) {
            links[at + w] &= ~which[w];
            links[at + words + w] &= ~which[w];
        }
    }

    boolean isDirty(int slot) {
        return (dirty[slot >>> 6] & (1L << (slot & 63))) != 0;
    }

    /**
     * Sets or clears a slot's dirty bit with a volatile store: setting it is ordered before the
     * writer's later owner stores, clearing it after the earlier ones.
     */
    void setDirty(int slot, boolean on) {
        int w = slot >>> 6;
        long bit = 1L << (slot & 63);
        long old = dirty[w];
        long now = on ? old | bit : old & ~bit;
        if (now != old) {
            LONGS.setVolatile(dirty, w, now);
        }
        if (on) {
            VarHandle.releaseFence(); // the owner stores that follow must not overtake the dirty bit
        }
    }

    /** A murmur3 finalizer: engine hashes are already uniform, but a hostile publisher's need not be. */
    private static long mix(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        return k;
    }
}
