/**
 * Per-step batch selection under token, chunk, request-slot and KV budgets
 * ({@link io.kvroute.scheduler.batch.PrefillBatchSelector}), and the processed-prefill-token counter
 * that drives HRRN aging ({@link io.kvroute.scheduler.batch.ProcessedPrefillCounter}). Follows
 * LightLLM's budget loop (seed 002, REFERENCE.md section 6). Engine thread only; plain Java.
 */
package io.kvroute.scheduler.batch;
