package io.kvroute.mock.engine;

import static java.util.Objects.requireNonNull;

import io.kvroute.scheduler.queue.PrefillQueueStrategy;

/**
 * Engine configuration; the compact constructor validates and names the flag in every message.
 *
 * @param strategy {@code prefill-queue-strategy}: default | promote_shortest | hrrn
 * @param batchMaxTokens {@code batch-max-tokens}, tokens per step (decode included); default 16384
 * @param chunkedPrefillSize {@code chunked-prefill-size}, prompt tokens per request per step; default 8192
 * @param runningMaxReqSize {@code running-max-req-size}; default 256; also the request-slot count of
 *     the node self request limit
 * @param kvCapacityTokens {@code kv-capacity-tokens}, KV pool size in tokens
 * @param pageSize {@code page-size}, prefix-cache granularity in tokens
 * @param nodeSelfRequestLimit {@code node-self-request-limit}: on by default
 * @param resourceWaitTimeoutSecs {@code resource-wait-timeout-secs}: default 20; negative = forever
 * @param timeModel step durations
 * @param engineLoop {@code engine-loop}: whose step loop to follow (lightllm | sglang); default lightllm
 * @param firstChunkGate {@code lightllm-first-chunk-gate}: in the lightllm loop, model the router's
 *     pending-first-chunk gate (default true; false lets the engine see every admitted request, for
 *     measuring what the gate hides; no effect in the sglang loop, which has no such gate)
 * @param priorityScheduling serve waiting requests by their request {@code priority} first, as vLLM's
 *     {@code --scheduling-policy priority} and SGLang's {@code --enable-priority-scheduling} do
 *     (default false: arrival order, the field ignored)
 */
public record EngineConfig(
        String strategy,
        int batchMaxTokens,
        int chunkedPrefillSize,
        int runningMaxReqSize,
        long kvCapacityTokens,
        int pageSize,
        boolean nodeSelfRequestLimit,
        double resourceWaitTimeoutSecs,
        TimeModel timeModel,
        EngineLoop engineLoop,
        boolean firstChunkGate,
        boolean priorityScheduling) {

    public EngineConfig {
        requireNonNull(timeModel, "timeModel");
        requireNonNull(engineLoop, "engineLoop");
        strategy = PrefillQueueStrategy.forName(strategy).name(); // rejects unknown values, lists choices
        requirePositive("batch-max-tokens", batchMaxTokens);
        requirePositive("chunked-prefill-size", chunkedPrefillSize);
        requirePositive("running-max-req-size", runningMaxReqSize);
        requirePositive("kv-capacity-tokens", kvCapacityTokens);
        requirePositive("page-size", pageSize);
        if (Double.isNaN(resourceWaitTimeoutSecs)) {
            throw new IllegalArgumentException("resource-wait-timeout-secs must be a number");
        }
    }

    /** LightLLM-like defaults, 1M-token KV pool, page 16, the fast time model, the lightllm loop. */
    public static EngineConfig defaults() {
        return new EngineConfig("default", 16384, 8192, 256, 1 << 20, 16, true, 20, TimeModel.fast(),
                EngineLoop.LIGHTLLM, true, false);
    }

    public EngineConfig withEngineLoop(EngineLoop loop) {
        return new EngineConfig(strategy, batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, kvCapacityTokens,
                pageSize, nodeSelfRequestLimit, resourceWaitTimeoutSecs, timeModel, loop, firstChunkGate, priorityScheduling);
    }

    public EngineConfig withFirstChunkGate(boolean gate) {
        return new EngineConfig(strategy, batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, kvCapacityTokens,
                pageSize, nodeSelfRequestLimit, resourceWaitTimeoutSecs, timeModel, engineLoop, gate, priorityScheduling);
    }

    public EngineConfig withStrategy(String name) {
        return new EngineConfig(name, batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, kvCapacityTokens,
                pageSize, nodeSelfRequestLimit, resourceWaitTimeoutSecs, timeModel, engineLoop, firstChunkGate, priorityScheduling);
    }

    public EngineConfig withBudgets(int batchMax, int chunk, int runningMax) {
        return new EngineConfig(strategy, batchMax, chunk, runningMax, kvCapacityTokens, pageSize,
                nodeSelfRequestLimit, resourceWaitTimeoutSecs, timeModel, engineLoop, firstChunkGate, priorityScheduling);
    }

    public EngineConfig withKv(long capacityTokens, int page) {
        return new EngineConfig(strategy, batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, capacityTokens,
                page, nodeSelfRequestLimit, resourceWaitTimeoutSecs, timeModel, engineLoop, firstChunkGate, priorityScheduling);
    }

    public EngineConfig withAdmission(boolean selfRequestLimit, double waitTimeoutSecs) {
        return new EngineConfig(strategy, batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, kvCapacityTokens,
                pageSize, selfRequestLimit, waitTimeoutSecs, timeModel, engineLoop, firstChunkGate, priorityScheduling);
    }

    public EngineConfig withTimeModel(TimeModel model) {
        return new EngineConfig(strategy, batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, kvCapacityTokens,
                pageSize, nodeSelfRequestLimit, resourceWaitTimeoutSecs, model, engineLoop, firstChunkGate, priorityScheduling);
    }

    public EngineConfig withPriorityScheduling(boolean on) {
        return new EngineConfig(strategy, batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, kvCapacityTokens,
                pageSize, nodeSelfRequestLimit, resourceWaitTimeoutSecs, timeModel, engineLoop, firstChunkGate, on);
    }

    private static void requirePositive(String flag, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(flag + " must be >= 1, got " + value);
        }
    }
}
