/**
 * Per-step batch selection under token, chunk, request-slot and KV budgets
 * ({@link io.kvroute.scheduler.batch.PrefillBatchSelector}), and the processed-prefill-token counter
 * that drives HRRN aging ({@link io.kvroute.scheduler.batch.ProcessedPrefillCounter}). Follows
 * LightLLM's budget loop in {@code lightllm/server/router/model_infer/mode_backend/chunked_prefill/impl.py}
 * (decode needs first, one chunk per prefill request, a request over the token budget skipped, not
 * blocking). Engine thread only; plain Java.
 */
package io.kvroute.scheduler.batch;
