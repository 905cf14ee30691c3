package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import java.util.HashMap;
import java.util.Map;

/**
 * The block-level index of what every engine publisher holds, one {@link BlockTable} per
 * {@code (model, LoRA adapter, block size)}: the same tokens under another model, adapter or page
 * size are other KV. Publishers are numbered slots (one per engine dp rank, assigned by the events
 * plane); a slot's blocks are bounded by {@code maxBlocksPerSlot}: a store beyond the bound is
 * refused and counted ({@link #refusedStores()}), which can only under-report that publisher.
 *
 * <p>Threading: one writer thread (the events plane) calls the mutators; {@link #match} is
 * lock-free from any thread. The table map is copy-on-write through a volatile field. Each table
 * keeps every block's parent so that a match can search (not walk) the slots whose held set is
 * prefix-closed and walk only the others ({@link BlockTable}, {@link ChainMatcher}).
 */
public final class BlockIndex {

    /** Which table: the served model, the adapter id (-1 for none) and the page size in tokens. */
    public record Key(String model, long loraId, int blockSize) {
        public Key {
            requireNonNull(model, "model");
        }
    }

    /** Bounds the writer time spent recounting tables (one scan each) when slots are unknown. */
    static final long REVALIDATE_INTERVAL_NANOS = 1_000_000_000L;

    private final int maxBlocksPerSlot;
    private volatile Map<Key, BlockTable> tables = Map.of();
    // writer only
    private int[] slotBlocks = new int[64];
    private long refusedStores;
    private boolean revalidated;
    private long lastRevalidationNanos;

    public BlockIndex(int maxBlocksPerSlot) {
        if (maxBlocksPerSlot < 1) {
            throw new IllegalArgumentException("maxBlocksPerSlot must be positive, got " + maxBlocksPerSlot);
        }
        this.maxBlocksPerSlot = maxBlocksPerSlot;
    }

    /** Records that {@code slot} stored the chain {@code hashes} from the root (no parent). Writer only. */
    public void store(Key key, int slot, long[] hashes) {
        store(key, slot, false, 0, hashes);
    }

    /**
     * Records that {@code slot} stored the chain {@code hashes} under {@code key}: the first hash's
     * parent is {@code parentHash} when {@code hasParent} (a BlockStored's {@code parent_block_hash}),
     * else the chain starts at the root; each later hash's parent is the hash before it. Writer only.
     */
    public void store(Key key, int slot, boolean hasParent, long parentHash, long[] hashes) {
        BlockTable t = tables.get(key);
        if (t == null) {
            Map<Key, BlockTable> copy = new HashMap<>(tables);
            t = new BlockTable();
            copy.put(key, t);
            tables = Map.copyOf(copy);
        }
        ensureSlot(slot);
        long parentKey = hasParent ? BlockCells.keyOf(parentHash) : BlockCells.ROOT;
        for (long h : hashes) {
            if (slotBlocks[slot] >= maxBlocksPerSlot) {
                refusedStores++; // the slot lacks h, so h's held children are orphans: tracked as holes
            } else if (t.add(h, parentKey, slot)) {
                slotBlocks[slot]++;
            }
            parentKey = BlockCells.keyOf(h);
        }
    }

    /**
     * Revalidates every table that has a slot in the unknown state (see {@link BlockTable}), at most
     * once per {@link #REVALIDATE_INTERVAL_NANOS}: one scan of the table with one parent probe per
     * block an unknown slot holds (KvEventsBench.revalidate1M: 34 ms for 1M blocks), after which a
     * prefix-closed slot is searched rather than walked again. Writer only; the events thread calls
     * it from its housekeeping tick.
     */
    public void maintain(long nowNanos) {
        if (revalidated && nowNanos - lastRevalidationNanos < REVALIDATE_INTERVAL_NANOS) {
            return;
        }
        boolean any = false;
        for (BlockTable t : tables.values()) {
            if (t.needsRevalidation()) {
                t.revalidate();
                any = true;
            }
        }
        if (any) {
            revalidated = true;
            lastRevalidationNanos = nowNanos;
        }
    }

    /** Revalidates every table now. Writer only (tests). */
    void revalidate() {
        for (BlockTable t : tables.values()) {
            t.revalidate();
        }
    }

    /** The table of {@code key}, or null (tests). */
    BlockTable table(Key key) {
        return tables.get(key);
    }

    /** Records that {@code slot} evicted {@code hashes} (from whichever table holds them). Writer only. */
    public void remove(int slot, long[] hashes) {
        ensureSlot(slot);
        for (BlockTable t : tables.values()) {
            for (long h : hashes) {
                if (t.remove(h, slot)) {
                    slotBlocks[slot]--;
                }
            }
        }
    }

    /** Forgets everything {@code slot} held. Writer only; scans every table. */
    public void clear(int slot) {
        ensureSlot(slot);
        for (BlockTable t : tables.values()) {
            slotBlocks[slot] -= t.clearSlot(slot);
        }
    }

    /** Blocks {@code slot} holds now. Writer only (gauges read it racily, which is fine). */
    int blocks(int slot) {
        return slot < slotBlocks.length ? slotBlocks[slot] : 0;
    }

    long refusedStores() {
        return refusedStores;
    }

    /** Total live blocks over all tables (a block held by several slots counts once per table). */
    public long liveBlocks() {
        long n = 0;
        for (BlockTable t : tables.values()) {
            n += t.liveBlocks();
        }
        return n;
    }

    /** Bytes held by the tables' arrays. */
    public long bytes() {
        long n = 0;
        for (BlockTable t : tables.values()) {
            n += t.bytes();
        }
        return n;
    }

    /**
     * Per slot (index = slot), the number of leading blocks of {@code hashes} it holds consecutively,
     * in the table of {@code key}. Lock-free; any thread.
     */
    public int[] match(Key key, long[] hashes, int slots) {
        int[] matched = new int[slots];
        BlockTable t = tables.get(key);
        if (t != null) {
            t.match(hashes, matched);
        }
        return matched;
    }

    private void ensureSlot(int slot) {
        if (slot >= slotBlocks.length) {
            int[] grown = new int[Math.max(slot + 1, slotBlocks.length * 2)];
            System.arraycopy(slotBlocks, 0, grown, 0, slotBlocks.length);
            slotBlocks = grown;
        }
    }
}
