package io.kvroute.router.prefix;

import java.util.Map;

/**
 * A consistent snapshot of a {@link PrefixIndex}'s size, for metrics.
 *
 * @param nodes tree nodes excluding the root
 * @param elements key elements stored on all edges
 * @param ownedElementsByWorker elements each known worker owns (it owns a prefix of each key it sent)
 * @param evictedElements worker-element ownerships removed by capacity or node-cap eviction, ever
 * @param evictedNodes nodes removed by eviction, ever
 * @param estimatedBytes the index's estimated memory, the figure {@link PrefixIndexConfig#maxBytes} bounds
 */
public record PrefixIndexStats(
        long nodes,
        long elements,
        Map<String, Long> ownedElementsByWorker,
        long evictedElements,
        long evictedNodes,
        long estimatedBytes) {

    public PrefixIndexStats {
        ownedElementsByWorker = Map.copyOf(ownedElementsByWorker);
    }

    public long ownedElements(String workerId) {
        return ownedElementsByWorker.getOrDefault(workerId, 0L);
    }
}
