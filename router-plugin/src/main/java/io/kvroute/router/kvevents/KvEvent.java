package io.kvroute.router.kvevents;

/**
 * One decoded engine KV event (REFERENCE §8). Hashes are the engine's 64-bit block ids; a bytes
 * hash on the wire is folded to its first 8 bytes big-endian, as SGLang folds its SHA-256.
 */
sealed interface KvEvent {

    /**
     * Pages entered the engine's cache, as one chain.
     *
     * @param blockHashes the new pages' hashes, first page first
     * @param hasParent false for a chain that starts at the root
     * @param parentHash the page before the first, when {@code hasParent}
     * @param blockSize tokens per page, or 0 when not sent
     * @param loraId the adapter, or -1 for none
     * @param tokenIds the pages' tokens, or null when not sent or not decoded (only
     *        {@link KvHashMode#TOKENS} publishers need them)
     */
    record BlockStored(long[] blockHashes, boolean hasParent, long parentHash, int blockSize, long loraId,
                       int[] tokenIds) implements KvEvent {}

    /** Pages left the engine's cache. */
    record BlockRemoved(long[] blockHashes) implements KvEvent {}

    /** Everything this publisher stored is gone. */
    record AllBlocksCleared() implements KvEvent {}
}
