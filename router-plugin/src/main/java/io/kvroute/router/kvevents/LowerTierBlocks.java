package io.kvroute.router.kvevents;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventWire;

/**
 * One publisher's blocks on its lower tiers (vLLM's CPU offload and other KV connectors announce
 * them with a {@code medium} other than {@code GPU}, vLLM {@code vllm/distributed/kv_events.py}),
 * kept apart from its GPU blocks in the plane's lower-tier {@link BlockIndex} under the same slot
 * and the same keys, so a request's hashes find both. Tiers are not told apart: a block on any lower
 * tier counts once there, however many tiers hold it.
 *
 * <p>In {@link KvHashMode#TOKENS} mode a lower-tier store with {@code token_ids} is keyed like a GPU
 * one; one without them (vLLM's offload copies blocks the GPU still holds and names them by hash
 * alone) takes the own hashes the publisher's GPU keying already gives those engine hashes. This
 * tier keeps its own engine-to-own map, so its removals are found after the GPU copy is gone.
 *
 * <p>Not thread-safe: the events thread owns one instance per publisher slot.
 */
final class LowerTierBlocks {
    private final BlockIndex index;
    private final int slot;
    private final int blockSize;
    /** This tier's engine-to-own map in tokens mode, else null. */
    private final TokenKeying keying;

    LowerTierBlocks(BlockIndex index, int slot, int blockSize, KvHashMode mode, int maxEntries) {
        this.index = index;
        this.slot = slot;
        this.blockSize = blockSize;
        this.keying = mode == KvHashMode.TOKENS ? new TokenKeying(maxEntries) : null;
    }

    /**
     * @param gpuKeying the publisher's GPU keying in tokens mode (for stores named by hash alone), else null
     * @return the number of blocks stored
     * @throws KvEventWire.Malformed when the event cannot be keyed; nothing changed then
     */
    int stored(KvEvent.BlockStored s, BlockIndex.Key key, TokenKeying gpuKeying) throws KvEventWire.Malformed {
        if (keying == null) {
            index.store(key, slot, s.hasParent(), s.parentHash(), s.blockHashes());
            return s.blockHashes().length;
        }
        int[] tokens = s.tokenIds();
        return tokens == null || tokens.length == 0 ? keying.storedByHash(s, gpuKeying, index, key, slot)
                : keying.stored(s, blockSize, index, key, slot, gpuKeying);
    }

    void removed(long[] engineHashes) {
        if (keying == null) {
            index.remove(slot, engineHashes);
        } else {
            keying.removed(engineHashes, index, slot);
        }
    }

    void clear() {
        index.clear(slot);
        if (keying != null) {
            keying.clear();
        }
    }

    /** Blocks this tier's keying refused at its bound (tokens mode), since creation. */
    long refusedBlocks() {
        return keying == null ? 0 : keying.refusedBlocks();
    }
}
