package io.kvroute.bench.trace;

import io.kvroute.protocol.PageHash;
import io.kvroute.router.kvevents.BlockIndex;
import io.kvroute.router.policy.ExactPrefixSource;
import io.kvroute.router.worker.Worker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The router's exact KV-event index without its ZeroMQ plane, for virtual time: the router's own
 * {@link BlockIndex} fed directly with the simulated engines' BlockStored / BlockRemoved events
 * (one slot per worker), queried the way {@code ExactCacheIndex} does (the request's tokens hashed
 * once with the engines' {@link PageHash}, one {@link BlockIndex#match} for all slots, an answer,
 * 0 included, for every worker the index knows). Not thread-safe: the simulation thread only.
 */
final class SimExactIndex implements ExactPrefixSource {

    private final BlockIndex index;
    private final BlockIndex.Key key;
    private final PageHash hasher;
    private final int blockSize;
    private final Map<String, Integer> slotById = new HashMap<>();

    SimExactIndex(String model, int blockSize, int maxBlocksPerSlot) {
        this.index = new BlockIndex(maxBlocksPerSlot);
        this.key = new BlockIndex.Key(model, -1, blockSize);
        this.hasher = new PageHash(blockSize);
        this.blockSize = blockSize;
    }

    void addWorker(String workerId, int slot) {
        slotById.put(workerId, slot);
    }

    void stored(int slot, Long parentHash, long[] hashes) {
        index.store(key, slot, parentHash != null, parentHash == null ? 0 : parentHash, hashes);
    }

    void removed(int slot, long[] hashes) {
        index.remove(slot, hashes);
    }

    void cleared(int slot) {
        index.clear(slot);
    }

    @Override
    public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds) {
        long[] hashes = hasher.hashes(tokenIds, tokenIds.length);
        int[] matched = index.match(key, hashes, slotById.size());
        Map<String, Long> out = new HashMap<>(2 * candidates.size());
        for (Worker w : candidates) {
            Integer slot = slotById.get(w.id());
            if (slot != null) {
                out.put(w.id(), slot < matched.length ? (long) matched[slot] * blockSize : 0L);
            }
        }
        return out;
    }
}
