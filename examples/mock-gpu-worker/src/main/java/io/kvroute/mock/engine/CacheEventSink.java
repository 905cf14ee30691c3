package io.kvroute.mock.engine;

/**
 * Where the prefix cache reports pages entering and leaving it, as engine KV events (SGLang's
 * BlockStored / BlockRemoved / AllBlocksCleared). Called on the engine thread; must not block.
 */
public interface CacheEventSink {
    /**
     * Pages entered the cache as one chain.
     *
     * @param hashes the pages' SGLang hashes, first page first
     * @param parentHash the hash of the page before the first, or null at the root
     * @param tokens the pages' tokens
     */
    void stored(long[] hashes, Long parentHash, int[] tokens, int pageSize);

    /** Pages left the cache. */
    void removed(long[] hashes);

    /** Everything left the cache. */
    void cleared();
}
