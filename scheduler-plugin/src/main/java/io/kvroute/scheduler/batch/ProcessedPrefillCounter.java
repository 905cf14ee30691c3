package io.kvroute.scheduler.batch;

/**
 * The HRRN aging clock: prefill tokens submitted for execution. It advances only when a selected
 * batch is submitted, by the token count already computed during selection; a mixed prefill/decode
 * batch counts all of its prefill tokens (decode tokens never count).
 *
 * <p>Concurrency: written by the engine thread; {@link #value} may be read from any thread.
 */
public final class ProcessedPrefillCounter {

    private volatile long processedPrefillTokens;

    public long value() {
        return processedPrefillTokens;
    }

    /** Advances by {@code batch.prefillTokens()}; call exactly once per submitted batch. */
    public void onBatchSubmitted(StepBatch batch) {
        processedPrefillTokens = processedPrefillTokens + batch.prefillTokens();
    }
}
