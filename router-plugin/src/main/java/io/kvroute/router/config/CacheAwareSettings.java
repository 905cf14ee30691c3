package io.kvroute.router.config;

import io.kvroute.router.policy.CacheAwareConfig;
import io.kvroute.router.prefix.PrefixIndexConfig;

/**
 * The cache_aware policy's flags: who counts as a cache candidate, the pressure guard, the queue
 * gate and saturation pin, and the approximate prefix index's key and size. The policy itself reads
 * {@link CacheAwareConfig} ({@link #toPolicyConfig()}), a plain record of the same knobs in the
 * policy package, so policy code does not depend on how flags are declared. Every one of these
 * flags needs a policy that runs cache_aware ({@code ConfigValidator} names the first one changed).
 */
public record CacheAwareSettings(
        @Setting(name = "cache-affinity-min-matched-tokens", defaultValue = "1024", min = 0,
                description = "cache_aware: a worker is a cache candidate with at least this many matched tokens "
                        + "(char modes estimate 4 chars per token)")
        long minMatchedTokens,
        @Setting(name = "cache-affinity-min-match-ratio", defaultValue = "0", min = 0, max = 1,
                description = "cache_aware: and at least this fraction of the request's key matched, 0..1; 0 = off")
        double minMatchRatio,
        @Setting(name = "cache-candidate-max-workers", defaultValue = "32", min = 1,
                description = "cache_aware: upper bound of the candidate cap")
        int candidateMaxWorkers,
        @Setting(name = "cache-candidate-min-workers", defaultValue = "8", min = 1,
                description = "cache_aware: lower bound of the proportional candidate cap")
        int candidateMinWorkers,
        @Setting(name = "cache-candidate-ratio", defaultValue = "0.05", min = 0, max = 1,
                description = "cache_aware: proportional candidate cap, ceil(ratio x pool)")
        double candidateRatio,
        @Setting(name = "cache-switch-margin-tokens", defaultValue = "1024", min = 0,
                description = "cache_aware: a rival with at most this much more uncached work may win on pressure")
        long switchMarginTokens,
        @Setting(name = "pressure-abs-threshold-tokens", defaultValue = "1024", min = 0,
                description = "cache_aware pressure guard: absolute gap in waiting uncached tokens")
        long pressureAbsThresholdTokens,
        @Setting(name = "pressure-rel-threshold", defaultValue = "1.5", min = 1,
                description = "cache_aware pressure guard: relative gap, > 1")
        double pressureRelThreshold,
        @Setting(name = "pressure-abs-threshold-ms", defaultValue = "100", min = 0,
                description = "cache_aware pressure guard: absolute gap in estimated prefill queue ms, used when both "
                        + "workers have estimates")
        double pressureAbsThresholdMs,
        @Setting(name = "disable-pressure-guard", defaultValue = "false",
                description = "cache_aware: the least-uncached admitted owner always wins")
        boolean disablePressureGuard,
        @Setting(name = "worker-queue-limit", defaultValue = Setting.UNSET, min = 1,
                description = "cache_aware queue gate: owners with a fresh num_waiting_reqs >= N are not cache winners "
                        + "(default unset).")
        Integer workerQueueLimit,
        @Setting(name = "saturation-queue-floor", defaultValue = Setting.UNSET, min = 1,
                description = "cache_aware saturation pin: stay on a queued owner when no routable worker is fresh below F "
                        + "(default unset; needs --worker-queue-limit).")
        Integer saturationQueueFloor,
        @Setting(name = "cache-key-mode", defaultValue = "auto", choices = {"auto", "tokens", "chars", "sampled"},
                description = "cache_aware prefix key: auto (tokens when the request has token ids, else sampled), tokens, "
                        + "chars or sampled")
        String keyMode,
        @Setting(name = "cache-sample-stride", defaultValue = "512", min = 1,
                description = "cache_aware sampled mode: keep one code point every N")
        int sampleStride,
        @Setting(name = "cache-max-tree-size", defaultValue = "4194304", min = 1,
                description = "cache_aware prefix index capacity per worker, in key elements, per key kind (tokens, chars "
                        + "and sampled keys have separate trees)")
        long maxTreeSize,
        @Setting(name = "cache-max-index-bytes", defaultValue = Setting.UNSET, min = 1 << 20,
                description = "cache_aware prefix index: global bound on its estimated memory across all workers and key "
                        + "kinds, in bytes, at least 1 MiB; the least recently used leaves are evicted whoever owns them "
                        + "(default: 1/8 of the max heap).")
        Long maxIndexBytes) {

    public CacheAwareSettings {
        if (saturationQueueFloor != null) {
            if (workerQueueLimit == null) {
                throw new ConfigException("--saturation-queue-floor requires --worker-queue-limit (there is no diversion"
                        + " to cancel without it)");
            }
            if (saturationQueueFloor > workerQueueLimit) {
                throw new ConfigException("--saturation-queue-floor (" + saturationQueueFloor
                        + ") must be at most --worker-queue-limit (" + workerQueueLimit + ")");
            }
        }
    }

    public static final CacheAwareSettings DEFAULTS = SettingsBinder.defaults(CacheAwareSettings.class);

    /** The policy's view of these settings (unset queue values are 0). */
    public CacheAwareConfig toPolicyConfig() {
        return new CacheAwareConfig(minMatchedTokens, minMatchRatio, candidateMaxWorkers, candidateMinWorkers,
                candidateRatio, switchMarginTokens, pressureAbsThresholdTokens, pressureRelThreshold,
                pressureAbsThresholdMs, disablePressureGuard, workerQueueLimit == null ? 0 : workerQueueLimit,
                saturationQueueFloor == null ? 0 : saturationQueueFloor, keyMode, sampleStride, maxTreeSize);
    }

    /** {@code --cache-max-index-bytes}, or its default: 1/8 of the max heap ({@link PrefixIndexConfig#defaultMaxBytes()}). */
    public long effectiveMaxIndexBytes() {
        return maxIndexBytes != null ? maxIndexBytes : PrefixIndexConfig.defaultMaxBytes();
    }
}
