package io.kvroute.router.prefix;

/**
 * Capacity limits of a {@link PrefixIndex}.
 *
 * @param perWorkerCapacityElements key elements one worker may own before its least recently used
 *     leaves are evicted (sampled characters, code points or tokens, depending on the key builder)
 * @param maxNodes tree nodes (excluding the root) before the globally least recently used leaves
 *     are evicted
 */
public record PrefixIndexConfig(long perWorkerCapacityElements, int maxNodes) {
    /** LightLLM's node cap; bounds memory independently of the per-worker budget. */
    public static final int DEFAULT_MAX_NODES = 1_000_000;
    /** 2^22 elements: about 2 billion characters at stride 512, or 4M tokens per worker. */
    public static final long DEFAULT_PER_WORKER_CAPACITY_ELEMENTS = 1L << 22;

    public PrefixIndexConfig {
        if (perWorkerCapacityElements < 0) {
            throw new IllegalArgumentException(
                    "perWorkerCapacityElements must be >= 0, got " + perWorkerCapacityElements);
        }
        if (maxNodes < 1) {
            throw new IllegalArgumentException("maxNodes must be >= 1, got " + maxNodes);
        }
    }

    public static PrefixIndexConfig defaults() {
        return new PrefixIndexConfig(DEFAULT_PER_WORKER_CAPACITY_ELEMENTS, DEFAULT_MAX_NODES);
    }

    public static PrefixIndexConfig withPerWorkerCapacity(long perWorkerCapacityElements) {
        return new PrefixIndexConfig(perWorkerCapacityElements, DEFAULT_MAX_NODES);
    }
}
