package io.kvroute.scheduler.engine;

/**
 * How an engine's step loop turns the selected work into forward passes, which decides the batch
 * {@link StepScheduler#nextBatch} returns and whether the engine's front gates entry.
 *
 * <ul>
 *   <li>{@link #LIGHTLLM}: one forward pass per step. The budget loop selects decode requests and
 *       prefill chunks (decode charged against KV and running slots only); when any chunk was
 *       selected the step is that prefill pass alone and the decode requests wait, otherwise the
 *       decode pass. Requests reach the engine through LightLLM's pending-first-chunk gate of
 *       {@code 2 x batch_max_tokens} ({@link StepScheduler#entryBudget}).</li>
 *   <li>{@link #SGLANG}: SGLang with mixed chunked prefill: the running decode batch and one prefill
 *       batch share the step's forward pass ({@link io.kvroute.scheduler.batch.MixedChunkSelector});
 *       no entry gate.</li>
 * </ul>
 */
public enum StepLoop {
    LIGHTLLM,
    SGLANG
}
