package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.policy.ExactPrefixSource;
import io.kvroute.router.worker.Worker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The cache-aware policy's view of the {@link KvEventsPlane}: cuts the request's tokens into each
 * worker's engine blocks, hashes them the engine's way ({@link BlockHasher}, once per block size),
 * and answers matched tokens = matched blocks × block size for every candidate whose every dp rank
 * is LIVE (the best rank counts: the engine's DP controller can place the request on it). Workers
 * that are replaying, unknown, silent-from-start or not publishing are left out, so the tree
 * answers for them in {@code auto} mode. Lock-free; any thread.
 */
public final class ExactCacheIndex implements ExactPrefixSource {
    private final KvEventsPlane plane;

    public ExactCacheIndex(KvEventsPlane plane) {
        this.plane = requireNonNull(plane, "plane");
    }

    @Override
    public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds) {
        KvEventsSnapshot snap = plane.snapshot();
        Map<String, Long> out = new HashMap<>();
        Map<Integer, long[]> hashesByBlockSize = new HashMap<>(2);
        Map<BlockIndex.Key, int[]> matchByKey = new HashMap<>(2);
        int slots = plane.slotCount();
        for (Worker w : candidates) {
            KvEventsSnapshot.WorkerEvents e = snap.get(w.id());
            if (e == null || !e.live()) {
                continue;
            }
            long[] hashes = hashesByBlockSize.computeIfAbsent(e.blockSize(),
                    bs -> new BlockHasher(bs).hashes(tokenIds, tokenIds.length));
            int[] matched = matchByKey.computeIfAbsent(new BlockIndex.Key(e.model(), -1, e.blockSize()),
                    k -> plane.index().match(k, hashes, slots));
            int best = 0;
            for (int slot : e.slots()) {
                if (slot < matched.length) {
                    best = Math.max(best, matched[slot]);
                }
            }
            out.put(w.id(), (long) best * e.blockSize());
        }
        return out;
    }
}
