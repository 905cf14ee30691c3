package io.kvroute.router.policy;

import io.kvroute.router.prefix.KeyBuilder;
import io.kvroute.router.prefix.PrefixIndexConfig;
import java.util.Locale;
import java.util.Objects;

/**
 * The knobs of {@link CacheAwarePolicy}, one per {@code --cache-*} / {@code --pressure-*} /
 * queue flag (docs/routing.md lists them with their defaults). Immutable. Range checks with flag
 * names live in {@code ConfigValidator}; this record only rejects values the policy cannot run with.
 *
 * @param minMatchedTokens a worker is a cache candidate only with at least this many matched tokens
 * @param minMatchRatio and at least this fraction of the request's key matched; 0 turns it off
 * @param candidateMaxWorkers upper bound of the candidate count cap
 * @param candidateMinWorkers lower bound of the proportional part of the cap
 * @param candidateRatio proportional part of the cap: {@code ceil(ratio * pool)}
 * @param switchMarginTokens a rival with at most this much more uncached work may win on pressure
 * @param pressureAbsThresholdTokens the guard's absolute gap, in waiting uncached tokens
 * @param pressureRelThreshold the guard's relative gap (both token and ms pairs)
 * @param pressureAbsThresholdMs the guard's absolute gap in estimated prefill queue ms
 * @param disablePressureGuard the least-uncached admitted candidate always wins
 * @param workerQueueLimit queue gate: owners with a fresh {@code num_waiting_reqs >= limit} are
 *     rejected; 0 = no gate
 * @param saturationQueueFloor saturation pin floor; 0 = unset (the fleet-saturation tier applies)
 * @param keyMode {@code auto}, {@code tokens}, {@code chars} or {@code sampled}
 * @param sampleStride code points per sample in {@code sampled} mode
 * @param maxTreeSizeElements per-worker capacity of the prefix index, in key elements
 */
public record CacheAwareConfig(
        long minMatchedTokens, double minMatchRatio, int candidateMaxWorkers, int candidateMinWorkers,
        double candidateRatio, long switchMarginTokens, long pressureAbsThresholdTokens, double pressureRelThreshold,
        double pressureAbsThresholdMs, boolean disablePressureGuard, int workerQueueLimit, int saturationQueueFloor,
        String keyMode, int sampleStride, long maxTreeSizeElements) {

    /** Characters per token used to turn char / sampled-char matches into tokens (a common BPE average). */
    public static final int CHARS_PER_TOKEN = 4;

    public static final String MODE_AUTO = "auto";
    public static final String MODE_TOKENS = "tokens";
    public static final String MODE_CHARS = "chars";
    public static final String MODE_SAMPLED = "sampled";

    public CacheAwareConfig {
        Objects.requireNonNull(keyMode, "keyMode");
        keyMode = keyMode.toLowerCase(Locale.ROOT);
        if (!(keyMode.equals(MODE_AUTO) || keyMode.equals(MODE_TOKENS) || keyMode.equals(MODE_CHARS)
                || keyMode.equals(MODE_SAMPLED))) {
            throw new IllegalArgumentException("keyMode must be auto, tokens, chars or sampled: " + keyMode);
        }
        if (candidateMaxWorkers < 1 || candidateMinWorkers < 1 || sampleStride < 1 || workerQueueLimit < 0
                || saturationQueueFloor < 0 || maxTreeSizeElements < 1) {
            throw new IllegalArgumentException("invalid cache-aware config: candidate workers, stride and tree size must be >= 1, queue values >= 0");
        }
        if (saturationQueueFloor > 0 && (workerQueueLimit == 0 || saturationQueueFloor > workerQueueLimit)) {
            throw new IllegalArgumentException("saturationQueueFloor " + saturationQueueFloor
                    + " needs a workerQueueLimit at least as large (got " + workerQueueLimit + ")");
        }
    }

    /** The documented defaults: no gate, no floor, auto key mode. */
    public static CacheAwareConfig defaults() {
        return new CacheAwareConfig(1024, 0.0, 32, 8, 0.05, 1024, 1024, 1.5, 100.0, false, 0, 0, MODE_AUTO,
                KeyBuilder.DEFAULT_SAMPLE_STRIDE, PrefixIndexConfig.DEFAULT_PER_WORKER_CAPACITY_ELEMENTS);
    }

    /** A copy with the queue gate and floor changed (0 = unset); handy for tests and embedders. */
    public CacheAwareConfig withQueue(int limit, int floor) {
        return new CacheAwareConfig(minMatchedTokens, minMatchRatio, candidateMaxWorkers, candidateMinWorkers,
                candidateRatio, switchMarginTokens, pressureAbsThresholdTokens, pressureRelThreshold,
                pressureAbsThresholdMs, disablePressureGuard, limit, floor, keyMode, sampleStride, maxTreeSizeElements);
    }

    /** A copy with the pressure guard switched off. */
    public CacheAwareConfig withoutPressureGuard() {
        return new CacheAwareConfig(minMatchedTokens, minMatchRatio, candidateMaxWorkers, candidateMinWorkers,
                candidateRatio, switchMarginTokens, pressureAbsThresholdTokens, pressureRelThreshold,
                pressureAbsThresholdMs, true, workerQueueLimit, saturationQueueFloor, keyMode, sampleStride,
                maxTreeSizeElements);
    }

    /** A copy with another candidate threshold (tokens) and ratio. */
    public CacheAwareConfig withMinMatch(long tokens, double ratio) {
        return new CacheAwareConfig(tokens, ratio, candidateMaxWorkers, candidateMinWorkers,
                candidateRatio, switchMarginTokens, pressureAbsThresholdTokens, pressureRelThreshold,
                pressureAbsThresholdMs, disablePressureGuard, workerQueueLimit, saturationQueueFloor, keyMode,
                sampleStride, maxTreeSizeElements);
    }

    /** A copy with another key mode. */
    public CacheAwareConfig withKeyMode(String mode) {
        return new CacheAwareConfig(minMatchedTokens, minMatchRatio, candidateMaxWorkers, candidateMinWorkers,
                candidateRatio, switchMarginTokens, pressureAbsThresholdTokens, pressureRelThreshold,
                pressureAbsThresholdMs, disablePressureGuard, workerQueueLimit, saturationQueueFloor, mode,
                sampleStride, maxTreeSizeElements);
    }

    /** {@code min(pool, max, max(min, ceil(ratio * pool)))}; 0 for an empty pool. */
    public int candidateCap(int poolSize) {
        long proportional = (long) Math.ceil(candidateRatio * poolSize);
        long cap = Math.min(poolSize, Math.min(candidateMaxWorkers, Math.max(candidateMinWorkers, proportional)));
        return (int) Math.max(0, cap);
    }
}
