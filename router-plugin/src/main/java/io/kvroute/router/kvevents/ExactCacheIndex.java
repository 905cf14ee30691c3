package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import io.kvroute.protocol.KvEventWire;
import io.kvroute.protocol.PageHash;
import io.kvroute.protocol.VllmBlockHash;
import io.kvroute.router.policy.ExactPrefixSource;
import io.kvroute.router.policy.PromptExtras;
import io.kvroute.router.worker.VllmHashSpec;
import io.kvroute.router.worker.Worker;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The cache-aware policy's view of the {@link KvEventsPlane}: cuts the request's tokens into each
 * worker's engine blocks, hashes them the way that worker's blocks are keyed ({@link PageHash},
 * SGLang's own hash, {@link VllmBlockHash}, vLLM's for a vLLM worker keyed by engine hashes, or
 * {@link TokenChainHash}, the router's own hash of the tokens, for
 * {@link KvHashMode#TOKENS} workers; once per block size and mode), and answers matched tokens =
 * matched blocks × block size for every candidate whose every dp rank
 * is exact (LIVE, or NEW with nothing sent: it holds nothing; the best rank counts: the engine's DP
 * controller can place the request on it). Workers that are replaying, unknown or not publishing are
 * left out, so the tree
 * answers for them in {@code auto} mode. Lock-free; any thread.
 *
 * <p><b>Lower tiers.</b> With {@link KvEventsConfig#lowerTierWeight()} above 0, a rank's credit is its
 * GPU prefix plus the weight times the blocks that continue that prefix on a lower tier (CPU, disk:
 * the engine loads them instead of computing them), as Dynamo credits device overlap in full and
 * host-pinned or disk extension blocks at {@code --router-host-cache-hit-weight} /
 * {@code --router-disk-cache-hit-weight} (ai-dynamo/dynamo {@code lib/kv-router/src/scheduling/overlap.rs},
 * {@code build_overlap_scores_response}); here one weight serves every lower tier. Matched tokens
 * are then the credit in blocks × block size, rounded.
 *
 * <p><b>What vLLM adds to a block's hash.</b> A worker keyed by vLLM's own hashes is looked up with the
 * request's {@link PromptExtras}: its {@code cache_salt} is folded into the first block as vLLM does; a
 * request with multimodal items or prompt embeddings, whose hashes vLLM computes from the decoded media
 * and tensors, gets no answer for such a worker (the tree answers in {@code --cache-index auto}), counted
 * per lookup in {@code kvroute_kv_events_lookups_declined_total{reason}}. A worker keyed by tokens is looked
 * up with the {@code cache_salt} salting the first block's own hash as {@link TokenKeying} salts a stored
 * block whose event carries it in {@code extra_keys}, so a salted request meets its own blocks and never
 * another tenant's unsalted ones; its multimodal items are not known here, and the blocks vLLM salts with
 * them are never matched (those before the first item are).
 */
public final class ExactCacheIndex implements ExactPrefixSource {
    /**
     * How one request is hashed: per page size, keying mode and adapter (own hashes fold it into their
     * root, vLLM's engine hashes into every block's extra keys), and for a vLLM worker keyed by engine
     * hashes the engines' algorithm and {@code PYTHONHASHSEED} (null: SGLang's page hash).
     */
    private record Hashing(int blockSize, KvHashMode mode, long loraId, String adapter, VllmHashSpec vllmHash,
                           String cacheSalt) {}

    /**
     * One index answer: a table and a hashing (own and engine hashes share a table, never a slot; two vLLM
     * workers of one model hashing with other algorithms or seeds share it too, with other hashes).
     */
    private record Query(BlockIndex.Key key, KvHashMode mode, VllmHashSpec vllmHash) {}

    private final KvEventsPlane plane;
    private final double lowerTierWeight;

    public ExactCacheIndex(KvEventsPlane plane) {
        this.plane = requireNonNull(plane, "plane");
        this.lowerTierWeight = plane.config().lowerTierWeight();
    }

    @Override
    public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds) {
        return matchedTokens(candidates, tokenIds, null);
    }

    /**
     * Blocks stored under {@code adapter} only: the decoder keys a BlockStored that names
     * {@code lora_name} by {@link KvEventWire#loraIdOf} of that name (vLLM folds the adapter name
     * into its block hashes, vLLM {@code vllm/v1/core/kv_cache_utils.py}), and so does this lookup.
     */
    @Override
    public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds, String adapter) {
        return matchedTokens(candidates, tokenIds, adapter, PromptExtras.NONE);
    }

    @Override
    public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds, String adapter,
            PromptExtras extras) {
        long loraId = adapter == null ? -1 : KvEventWire.loraIdOf(adapter);
        KvEventsSnapshot snap = plane.snapshot();
        Map<String, KvEventsSnapshot.WorkerEvents> subscribed = snap.workers();
        if (subscribed.isEmpty()) {
            return Map.of(); // no worker publishes: nothing to hash, nothing to scan
        }
        Answers answers = new Answers(tokenIds, plane.slotCount(), loraId, adapter, extras);
        if (subscribed.size() < candidates.size()) {
            // walk the smaller side: answers for subscribed workers outside the candidates are dropped by
            // the caller, which keys the answers by its candidates (ExactPrefixSource's contract)
            subscribed.forEach(answers::add);
        } else {
            for (Worker w : candidates) {
                answers.add(w.id(), snap.get(w.id()));
            }
        }
        if (answers.declined) {
            plane.lookupDeclined(extras.unhashable());
        }
        return answers.out;
    }

    @Override
    public int bestRank(Worker worker, int[] tokenIds) {
        return bestRank(worker, tokenIds, null, PromptExtras.NONE);
    }

    @Override
    public int bestRank(Worker worker, int[] tokenIds, String adapter, PromptExtras extras) {
        KvEventsSnapshot.WorkerEvents e = plane.snapshot().get(worker.id());
        if (e == null || !e.live() || e.slots().length < 2 || tokenIds == null || unhashable(e, extras)) {
            return -1;
        }
        long loraId = adapter == null ? -1 : KvEventWire.loraIdOf(adapter);
        long[] hashes = hash(tokenIds, new Hashing(e.blockSize(), e.hashMode(), loraId, adapter, e.vllmHash(),
                extras.cacheSalt()));
        BlockIndex.Key key = new BlockIndex.Key(e.model(), loraId, e.blockSize());
        int slotCount = plane.slotCount();
        int[] matched = plane.index().match(key, hashes, slotCount);
        Extensions extensions = new Extensions(key, hashes, slotCount);
        int bestRank = -1;
        double bestCredit = 0;
        int[] slots = e.slots(); // index = the engine's dp rank (the plane subscribes rank r's endpoint r-th)
        for (int rank = 0; rank < slots.length; rank++) {
            double credit = credit(slots[rank], matched, extensions);
            if (credit > bestCredit) {
                bestCredit = credit;
                bestRank = rank;
            }
        }
        return bestRank;
    }

    /** One request's answers: hashed once per (block size, mode), matched once per query. */
    private final class Answers {
        final Map<String, Long> out = new HashMap<>();
        private final Map<Hashing, long[]> hashesBySpec = new HashMap<>(2);
        private final Map<Query, int[]> matchByQuery = new HashMap<>(2);
        private final Map<Query, Extensions> extensionsByQuery = new HashMap<>(2);
        private final int[] tokenIds;
        private final int slots;
        private final long loraId;
        private final String adapter;
        private final PromptExtras extras;
        /** A worker was left out: its engine hashes cannot be computed for this request. */
        boolean declined;

        Answers(int[] tokenIds, int slots, long loraId, String adapter, PromptExtras extras) {
            this.tokenIds = tokenIds;
            this.slots = slots;
            this.loraId = loraId;
            this.adapter = adapter;
            this.extras = extras;
        }

        void add(String workerId, KvEventsSnapshot.WorkerEvents e) {
            if (e == null || !e.live()) {
                return;
            }
            if (unhashable(e, extras)) {
                declined = true;
                return;
            }
            long[] hashes = hashesBySpec.computeIfAbsent(new Hashing(e.blockSize(), e.hashMode(), loraId, adapter,
                    e.vllmHash(), extras.cacheSalt()), h -> hash(tokenIds, h));
            int[] matched = matchByQuery.computeIfAbsent(
                    new Query(new BlockIndex.Key(e.model(), loraId, e.blockSize()), e.hashMode(), e.vllmHash()),
                    q -> plane.index().match(q.key(), hashes, slots));
            Extensions extensions = lowerTierWeight == 0 ? null : extensionsByQuery.computeIfAbsent(
                    new Query(new BlockIndex.Key(e.model(), loraId, e.blockSize()), e.hashMode(), e.vllmHash()),
                    q -> new Extensions(q.key(), hashes, slots));
            double best = 0;
            for (int slot : e.slots()) {
                best = Math.max(best, credit(slot, matched, extensions));
            }
            out.put(workerId, Math.round(best * e.blockSize()));
        }
    }

    /** A slot's credit in blocks: its GPU prefix, plus the weighted lower-tier blocks that continue it. */
    private double credit(int slot, int[] gpuMatched, Extensions extensions) {
        int gpu = slot < gpuMatched.length ? gpuMatched[slot] : 0;
        if (extensions == null || lowerTierWeight == 0) {
            return gpu;
        }
        return gpu + lowerTierWeight * extensions.from(gpu, slot);
    }

    /**
     * One query's lower-tier matches, per start block: how many blocks from {@code start} on each slot
     * holds on a lower tier consecutively (one index match per distinct start, the slots' GPU depths).
     */
    private final class Extensions {
        private final BlockIndex.Key key;
        private final long[] hashes;
        private final int slots;
        private final Map<Integer, int[]> byStart = new HashMap<>(2);

        Extensions(BlockIndex.Key key, long[] hashes, int slots) {
            this.key = key;
            this.hashes = hashes;
            this.slots = slots;
        }

        int from(int start, int slot) {
            if (start >= hashes.length) {
                return 0;
            }
            int[] matched = byStart.computeIfAbsent(start, s -> plane.lowerTierIndex().match(key,
                    Arrays.copyOfRange(hashes, s, hashes.length), slots));
            return slot < matched.length ? matched[slot] : 0;
        }
    }

    /** A worker keyed by vLLM's own hashes, which this request's multimodal items or embeddings make unknowable. */
    private static boolean unhashable(KvEventsSnapshot.WorkerEvents e, PromptExtras extras) {
        return e.vllmHash() != null && extras.unhashable() != null;
    }

    /**
     * A vLLM worker keyed by engine hashes gets vLLM's {@code sha256_cbor} or {@code xxhash_cbor} chain with
     * {@code (lora_name,)} as every block's extra keys for an adapter and the request's {@code cache_salt}
     * after it on the first block (vLLM {@code vllm/v1/core/kv_cache_utils.py},
     * {@code generate_block_hash_extra_keys}); requests with multimodal items or prompt embeddings never get
     * here ({@link #unhashable}).
     */
    private static long[] hash(int[] tokenIds, Hashing h) {
        if (h.mode() == KvHashMode.TOKENS) {
            // the salt as the events' first block carries it: vLLM's extra keys (lora_name, cache_salt) folded
            // (an empty salt is falsy in vLLM, no extra key)
            long salt = h.cacheSalt() == null || h.cacheSalt().isEmpty() ? 0 : KvEventWire.extraKeysOf(
                    h.adapter() == null ? List.of(h.cacheSalt()) : List.of(h.adapter(), h.cacheSalt()));
            return TokenChainHash.hashes(tokenIds, tokenIds.length, h.blockSize(), h.loraId(), salt);
        }
        if (h.vllmHash() != null) {
            return new VllmBlockHash(h.vllmHash().algo(), h.vllmHash().seed(), h.blockSize())
                    .hashes(tokenIds, tokenIds.length, h.adapter(), h.cacheSalt());
        }
        return new PageHash(h.blockSize()).hashes(tokenIds, tokenIds.length);
    }
}
