package io.kvroute.scheduler.batch;

/**
 * Static per-step budgets.
 *
 * @param batchMaxTokens tokens per step, decode tokens included (LightLLM {@code batch_max_tokens})
 * @param chunkedPrefillSize prompt tokens one request may compute in one step
 * @param runningMaxReqSize requests that may hold a running slot (decoding or mid-prefill)
 * @param decodeSharesTokenBudget true: decode tokens are charged against {@code batchMaxTokens}
 *     before prefill (one mixed forward pass, SGLang's mixed chunk); false: decode runs as its own
 *     forward pass in the same step and is charged against KV and running slots only (LightLLM's
 *     default backend; with it, the long-request TTFT of the {@code long-first-burst} and
 *     {@code interleaved} workloads (docs/benchmarks.md) is unaffected by running decodes,
 *     whereas charging one decode token makes a full 1024-token chunk never fit a 1024 budget)
 */
public record BatchBudget(int batchMaxTokens, int chunkedPrefillSize, int runningMaxReqSize,
        boolean decodeSharesTokenBudget) {

    /** LightLLM's defaults: 16384 / 8192 / 256, decode in its own pass. */
    public static final BatchBudget DEFAULTS = new BatchBudget(16384, 8192, 256, false);

    /** A mixed-batch budget: decode tokens charged against {@code batchMaxTokens} first. */
    public BatchBudget(int batchMaxTokens, int chunkedPrefillSize, int runningMaxReqSize) {
        this(batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, true);
    }

    public BatchBudget {
        if (batchMaxTokens < 1) {
            throw new IllegalArgumentException("batch-max-tokens must be >= 1: " + batchMaxTokens);
        }
        if (chunkedPrefillSize < 1) {
            throw new IllegalArgumentException("chunked-prefill-size must be >= 1: " + chunkedPrefillSize);
        }
        if (runningMaxReqSize < 1) {
            throw new IllegalArgumentException("running-max-req-size must be >= 1: " + runningMaxReqSize);
        }
    }
}
