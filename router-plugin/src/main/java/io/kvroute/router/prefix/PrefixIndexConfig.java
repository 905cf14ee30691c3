package io.kvroute.router.prefix;

/**
 * Capacity limits of a {@link PrefixIndex}.
 *
 * @param perWorkerCapacityElements key elements one worker may own before its least recently used
 *     leaves are evicted (sampled characters, code points or tokens, depending on the key builder)
 * @param maxNodes tree nodes (excluding the root) before the globally least recently used leaves
 *     are evicted
 * @param maxBytes the whole index's estimated memory ({@link #estimatedBytes}) across all workers;
 *     over it, the globally least recently used leaves are evicted, whoever owns them, down to
 *     {@link #bytesLowWater} (so a full index does not rescan its tree on every insert)
 */
public record PrefixIndexConfig(long perWorkerCapacityElements, int maxNodes, long maxBytes) {
    /** LightLLM's node cap; bounds memory independently of the per-worker budget. */
    public static final int DEFAULT_MAX_NODES = 1_000_000;
    /** 2^22 elements: about 2 billion characters at stride 512, or 4M tokens per worker. */
    public static final long DEFAULT_PER_WORKER_CAPACITY_ELEMENTS = 1L << 22;
    /** Estimated bytes per key element: an int edge slot (byte edges take 1; counted as 4, an upper bound). */
    public static final long BYTES_PER_ELEMENT = 4;
    /** Estimated bytes per node: the {@link Node} object, its first owner ticks and its parent's child slot. */
    public static final long BYTES_PER_NODE = 128;
    /** The default global bound: this fraction (1/8) of the JVM's max heap, for all of one policy's indexes. */
    public static final int DEFAULT_HEAP_DIVISOR = 8;

    public PrefixIndexConfig {
        if (perWorkerCapacityElements < 0) {
            throw new IllegalArgumentException(
                    "perWorkerCapacityElements must be >= 0, got " + perWorkerCapacityElements);
        }
        if (maxNodes < 1) {
            throw new IllegalArgumentException("maxNodes must be >= 1, got " + maxNodes);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be >= 1, got " + maxBytes);
        }
    }

    /** No byte bound beyond the per-worker and node caps (tests of those alone). */
    public PrefixIndexConfig(long perWorkerCapacityElements, int maxNodes) {
        this(perWorkerCapacityElements, maxNodes, Long.MAX_VALUE);
    }

    public static PrefixIndexConfig defaults() {
        return new PrefixIndexConfig(DEFAULT_PER_WORKER_CAPACITY_ELEMENTS, DEFAULT_MAX_NODES, defaultMaxBytes());
    }

    public static PrefixIndexConfig withPerWorkerCapacity(long perWorkerCapacityElements) {
        return new PrefixIndexConfig(perWorkerCapacityElements, DEFAULT_MAX_NODES, defaultMaxBytes());
    }

    /** {@code Runtime.maxMemory() / 8}: the documented default of {@code --cache-max-index-bytes}. */
    public static long defaultMaxBytes() {
        return Math.max(1, Runtime.getRuntime().maxMemory() / DEFAULT_HEAP_DIVISOR);
    }

    /** The estimate the byte bound is checked against. */
    public static long estimatedBytes(long elements, long nodes) {
        return elements * BYTES_PER_ELEMENT + nodes * BYTES_PER_NODE;
    }

    /** Where eviction over {@link #maxBytes} stops: 7/8 of it. */
    public long bytesLowWater() {
        return maxBytes - maxBytes / 8;
    }
}
