package io.kvroute.scheduler.batch;

/**
 * Static per-step budgets.
 *
 * @param batchMaxTokens tokens per step, decode tokens included (LightLLM {@code batch_max_tokens})
 * @param chunkedPrefillSize prompt tokens one request may compute in one step
 * @param runningMaxReqSize requests that may hold a running slot (decoding or mid-prefill)
 */
public record BatchBudget(int batchMaxTokens, int chunkedPrefillSize, int runningMaxReqSize) {

    /** LightLLM's defaults: 16384 / 8192 / 256. */
    public static final BatchBudget DEFAULTS = new BatchBudget(16384, 8192, 256);

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
