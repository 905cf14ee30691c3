/**
 * Ready-list ordering inside the engine: the prefill queue strategies ({@code default},
 * {@code promote_shortest}, {@code hrrn}), the per-request scheduling state they read
 * ({@link io.kvroute.scheduler.queue.SchedRequest}), the priority rules (admission priority vs
 * internal inference priority, PD continuation segments) and the admission-ordered
 * {@link io.kvroute.scheduler.queue.WaitingQueue}.
 *
 * <p>Start with {@link io.kvroute.scheduler.queue.PrefillQueueStrategy}. Semantics follow LightLLM's
 * configurable prefill-queue scheduling ({@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/};
 * docs/scheduler.md). Plain Java: no Jetty, ZeroMQ
 * or DJL imports; every class here is driven by the engine thread only.
 */
package io.kvroute.scheduler.queue;
