package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.policy.ExactPrefixSource;
import io.kvroute.router.worker.Worker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The cache-aware policy's view of the {@link KvEventsPlane}: cuts the request's tokens into each
 * worker's engine blocks, hashes them the way that worker's blocks are keyed ({@link BlockHasher},
 * the engine's own hash, or {@link TokenChainHash}, the router's own hash of the tokens, for
 * {@link KvHashMode#TOKENS} workers; once per block size and mode), and answers matched tokens = matched blocks × block size for every candidate whose every dp rank
 * is LIVE (the best rank counts: the engine's DP controller can place the request on it). Workers
 * that are replaying, unknown, silent-from-start or not publishing are left out, so the tree
 * answers for them in {@code auto} mode. Lock-free; any thread.
 */
public final class ExactCacheIndex implements ExactPrefixSource {
    /** How one request is hashed: per page size and keying mode. */
    private record Hashing(int blockSize, KvHashMode mode) {}

    /** One index answer: a table and a hashing (own and engine hashes share a table, never a slot). */
    private record Query(BlockIndex.Key key, KvHashMode mode) {}

    private final KvEventsPlane plane;

    public ExactCacheIndex(KvEventsPlane plane) {
        this.plane = requireNonNull(plane, "plane");
    }

    @Override
    public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds) {
        KvEventsSnapshot snap = plane.snapshot();
        Map<String, Long> out = new HashMap<>();
        Map<Hashing, long[]> hashesBySpec = new HashMap<>(2);
        Map<Query, int[]> matchByQuery = new HashMap<>(2);
        int slots = plane.slotCount();
        for (Worker w : candidates) {
            KvEventsSnapshot.WorkerEvents e = snap.get(w.id());
            if (e == null || !e.live()) {
                continue;
            }
            long[] hashes = hashesBySpec.computeIfAbsent(new Hashing(e.blockSize(), e.hashMode()),
                    h -> hash(tokenIds, h));
            int[] matched = matchByQuery.computeIfAbsent(
                    new Query(new BlockIndex.Key(e.model(), -1, e.blockSize()), e.hashMode()),
                    q -> plane.index().match(q.key(), hashes, slots));
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

    private static long[] hash(int[] tokenIds, Hashing h) {
        return h.mode() == KvHashMode.TOKENS
                ? TokenChainHash.hashes(tokenIds, tokenIds.length, h.blockSize(), -1)
                : new BlockHasher(h.blockSize()).hashes(tokenIds, tokenIds.length);
    }
}
