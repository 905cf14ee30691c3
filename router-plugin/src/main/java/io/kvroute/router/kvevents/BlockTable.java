package io.kvroute.router.kvevents;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An open-addressing map from a 64-bit block hash to the set of publisher slots holding that block
 * (a bit mask of {@code words} longs per entry), written by ONE thread and read by any number of
 * threads without locks.
 *
 * <p><b>Layout.</b> {@code keys[i]} and {@code masks[i * words .. + words)}; linear probing from a
 * mixed hash. Key 0 marks an empty cell, so a block whose hash is 0 is stored as 1 (a 2^-64 event
 * that can at worst merge two blocks' owners). Removing the last owner leaves the key with an empty
 * mask (a tombstone that still answers "nobody"), so a reader's probe sequence never changes under
 * it; tombstones go at the next rebuild.
 *
 * <p><b>Concurrency.</b> The writer publishes a new cell's mask before its key (release store) and a
 * reader loads the key with acquire, so a visible key always has its mask. Mask words change with
 * opaque stores: a reader sees each bit old or new, which is what a concurrent reader of a cache
 * can know anyway. A rebuild (grow, more mask words, or too many tombstones) fills new arrays and
 * publishes them through one volatile field, so a reader uses one consistent generation per call.
 */
final class BlockTable {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int MIN_CAPACITY = 1024;

    /** One generation of the arrays. */
    private static final class Cells {
        final long[] keys;
        final long[] masks;
        final int words;
        final int mask;

        Cells(int capacity, int words) {
            this.keys = new long[capacity];
            this.masks = new long[capacity * words];
            this.words = words;
            this.mask = capacity - 1;
        }
    }

    private volatile Cells cells = new Cells(MIN_CAPACITY, 1);
    // writer only
    private int used;
    private int live;

    /** Number of blocks with at least one owner. */
    int liveBlocks() {
        return live;
    }

    /** Bytes held by the arrays (for the memory gauge). */
    long bytes() {
        Cells c = cells;
        return (long) c.keys.length * Long.BYTES + (long) c.masks.length * Long.BYTES;
    }

    /** Sets {@code slot}'s bit on {@code hash}; true when it was not set. Writer only. */
    boolean add(long hash, int slot) {
        long key = hash == 0 ? 1 : hash;
        Cells c = cells;
        if (slot >= c.words * Long.SIZE) {
            c = rebuild(c.keys.length, (slot / Long.SIZE) + 1);
        }
        if ((used + 1) * 10L > c.keys.length * 6L) {
            c = rebuild(live * 10L > c.keys.length * 3L ? c.keys.length * 2 : c.keys.length, c.words);
        }
        int i = find(c, key);
        int w = slot >>> 6;
        long bit = 1L << (slot & 63);
        if (c.keys[i] == 0) {
            c.masks[i * c.words + w] = bit;
            LONGS.setRelease(c.keys, i, key);
            used++;
            live++;
            return true;
        }
        int at = i * c.words + w;
        long old = c.masks[at];
        if ((old & bit) != 0) {
            return false;
        }
        if (isEmpty(c, i)) {
            live++;
        }
        LONGS.setOpaque(c.masks, at, old | bit);
        return true;
    }

    /** Clears {@code slot}'s bit on {@code hash}; true when it was set. Writer only. */
    boolean remove(long hash, int slot) {
        long key = hash == 0 ? 1 : hash;
        Cells c = cells;
        if (slot >= c.words * Long.SIZE) {
            return false;
        }
        int i = find(c, key);
        if (c.keys[i] == 0) {
            return false;
        }
        int at = i * c.words + (slot >>> 6);
        long bit = 1L << (slot & 63);
        long old = c.masks[at];
        if ((old & bit) == 0) {
            return false;
        }
        LONGS.setOpaque(c.masks, at, old & ~bit);
        if (isEmpty(c, i)) {
            live--;
        }
        return true;
    }

    /** Clears {@code slot} everywhere; returns how many blocks it held. Writer only; scans the table. */
    int clearSlot(int slot) {
        Cells c = cells;
        if (slot >= c.words * Long.SIZE) {
            return 0;
        }
        int w = slot >>> 6;
        long bit = 1L << (slot & 63);
        int cleared = 0;
        for (int i = 0; i < c.keys.length; i++) {
            int at = i * c.words + w;
            long old = c.masks[at];
            if (c.keys[i] != 0 && (old & bit) != 0) {
                LONGS.setOpaque(c.masks, at, old & ~bit);
                cleared++;
                if (isEmpty(c, i)) {
                    live--;
                }
            }
        }
        return cleared;
    }

    /**
     * Per slot, how many leading hashes of {@code hashes} it holds consecutively from the first
     * (a slot must hold block 0 to match at all). Any thread.
     *
     * @param matched out: {@code matched[slot]} is set for every slot below its length
     */
    void match(long[] hashes, int[] matched) {
        Cells c = cells;
        int words = c.words;
        long[] alive = new long[words];
        long[] next = new long[words];
        int n = hashes.length;
        int depth = 0;
        boolean any = n > 0 && maskOf(c, hashes[0], alive);
        if (any) {
            depth = 1;
            for (int d = 1; d < n; d++) {
                boolean present = maskOf(c, hashes[d], next);
                boolean stillAny = false;
                for (int w = 0; w < words; w++) {
                    long keep = present ? alive[w] & next[w] : 0;
                    long ended = alive[w] & ~keep;
                    while (ended != 0) {
                        int slot = (w << 6) + Long.numberOfTrailingZeros(ended);
                        if (slot < matched.length) {
                            matched[slot] = d;
                        }
                        ended &= ended - 1;
                    }
                    alive[w] = keep;
                    stillAny |= keep != 0;
                }
                if (!stillAny) {
                    return;
                }
                depth = d + 1;
            }
            for (int w = 0; w < words; w++) {
                long rest = alive[w];
                while (rest != 0) {
                    int slot = (w << 6) + Long.numberOfTrailingZeros(rest);
                    if (slot < matched.length) {
                        matched[slot] = depth;
                    }
                    rest &= rest - 1;
                }
            }
        }
    }

    /** True when {@code slot} holds {@code hash}. Any thread. */
    boolean holds(long hash, int slot) {
        Cells c = cells;
        if (slot >= c.words * Long.SIZE) {
            return false;
        }
        long[] m = new long[c.words];
        return maskOf(c, hash, m) && (m[slot >>> 6] & (1L << (slot & 63))) != 0;
    }

    /** Loads the owners of {@code hash} into {@code out}; false when the block is unknown. */
    private static boolean maskOf(Cells c, long hash, long[] out) {
        long key = hash == 0 ? 1 : hash;
        int i = (int) mix(key) & c.mask;
        while (true) {
            long k = (long) LONGS.getAcquire(c.keys, i);
            if (k == key) {
                boolean any = false;
                for (int w = 0; w < c.words; w++) {
                    long v = (long) LONGS.getOpaque(c.masks, i * c.words + w);
                    out[w] = v;
                    any |= v != 0;
                }
                return any;
            }
            if (k == 0) {
                return false;
            }
            i = (i + 1) & c.mask;
        }
    }

    private static int find(Cells c, long key) {
        int i = (int) mix(key) & c.mask;
        while (c.keys[i] != 0 && c.keys[i] != key) {
            i = (i + 1) & c.mask;
        }
        return i;
    }

    private static boolean isEmpty(Cells c, int i) {
        for (int w = 0; w < c.words; w++) {
            if (c.masks[i * c.words + w] != 0) {
                return false;
            }
        }
        return true;
    }

    /** Copies live entries into fresh arrays (dropping tombstones) and publishes them. Writer only. */
    private Cells rebuild(long minCapacity, int words) {
        Cells old = cells;
        int capacity = MIN_CAPACITY;
        while (capacity < minCapacity || live * 10L > capacity * 5L) {
            capacity <<= 1;
        }
        Cells fresh = new Cells(capacity, words);
        int count = 0;
        for (int i = 0; i < old.keys.length; i++) {
            if (old.keys[i] != 0 && !isEmpty(old, i)) {
                int j = find(fresh, old.keys[i]);
                fresh.keys[j] = old.keys[i];
                System.arraycopy(old.masks, i * old.words, fresh.masks, j * words, old.words);
                count++;
            }
        }
        used = count;
        live = count;
        cells = fresh;
        return fresh;
    }

    /** A murmur3 finalizer: engine hashes are already uniform, but a hostile publisher's need not be. */
    private static long mix(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        return k;
    }
}
