package io.kvroute.protocol;

/**
 * One decoded engine KV event, as vLLM {@code vllm/distributed/kv_events.py} publishes it
 * (SGLang {@code python/sglang/srt/disaggregation/kv_events.py} copies it). Hashes are the engine's 64-bit block
 * ids; a bytes hash on the wire (vLLM with {@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=0}) is folded to its last
 * 8 bytes big-endian, which is exactly the integer vLLM sends otherwise
 * ({@code int.from_bytes(digest, "big") & (2**64 - 1)}, vLLM {@code vllm/v1/core/kv_cache_utils.py}).
 */
public sealed interface KvEvent {

    /**
     * Pages entered the engine's cache, as one chain.
     *
     * @param blockHashes the new pages' hashes, first page first
     * @param hasParent false for a chain that starts at the root
     * @param parentHash the page before the first, when {@code hasParent}
     * @param blockSize tokens per page, or 0 when not sent
     * @param loraId the adapter, or -1 for none (a {@code lora_name} without a {@code lora_id} gets a
     *        non-negative id derived from the name, so adapters' blocks never meet the base model's)
     * @param tokenIds the pages' tokens, or null when not sent or not decoded (only
     *        a router keying blocks by their tokens needs them)
     * @param medium where the pages live ({@code "GPU"}, {@code "CPU"}, ...), or null when not sent
     * @param groupIdx the KV-cache group of a hybrid model (vLLM {@code group_idx}), or -1 when not sent
     * @param specKind the group's attention kind (vLLM {@code kv_cache_spec_kind}), or null
     * @param extraKeys per page, a fold of vLLM's {@code extra_keys} entry (cache salt, multimodal ids)
     *        or 0 for none; null when the event carries none at all
     */
    record BlockStored(long[] blockHashes, boolean hasParent, long parentHash, int blockSize, long loraId,
                       int[] tokenIds, String medium, int groupIdx, String specKind, long[] extraKeys)
            implements KvEvent {
        /** A single-tier, single-group event without extra keys (SGLang, kvroute's own engines). */
        public BlockStored(long[] blockHashes, boolean hasParent, long parentHash, int blockSize, long loraId,
                    int[] tokenIds) {
            this(blockHashes, hasParent, parentHash, blockSize, loraId, tokenIds, null, -1, null, null);
        }
    }

    /**
     * Pages left the engine's cache.
     *
     * @param medium the tier they left, or null when not sent
     * @param groupIdx the KV-cache group, or -1 when not sent
     */
    record BlockRemoved(long[] blockHashes, String medium, int groupIdx) implements KvEvent {
        public BlockRemoved(long[] blockHashes) {
            this(blockHashes, null, -1);
        }
    }

    /** Everything this publisher stored is gone. */
    record AllBlocksCleared() implements KvEvent {}
}
