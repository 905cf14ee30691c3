package io.kvroute.scheduler.queue;

import java.util.List;
import java.util.Locale;

/**
 * Orders the engine's ready list once per step, before the token/KV budget loop, as LightLLM's
 * {@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/} does; it never
 * preempts running work.
 *
 * <p>Contract of {@link #reorder}: returns a new list that is a permutation of {@code ready} (never
 * drops or duplicates); never mutates the input list or any request's progress state; keeps ties
 * stable; is deterministic (the same inputs give the same order on every TP rank). Decode requests
 * come first in their original order; only prefill requests are reordered.
 *
 * <p>Concurrency: called on the engine thread only; implementations are not thread-safe.
 */
public interface PrefillQueueStrategy {

    /** Accepted values of {@code prefill-queue-strategy}. */
    List<String> NAMES = List.of("default", "promote_shortest", "hrrn");

    /** The configured name ({@code default}, {@code promote_shortest} or {@code hrrn}). */
    String name();

    /**
     * @param ready the ready list in queue order (decode and prefill requests mixed)
     * @param processedPrefillTokens the engine's processed-prefill-token counter (HRRN aging)
     */
    List<SchedRequest> reorder(List<SchedRequest> ready, long processedPrefillTokens);

    /**
     * Parses {@code prefill-queue-strategy}; {@code null} or blank means {@code default}.
     *
     * @throws IllegalArgumentException naming the flag, the value and the choices
     */
    static PrefillQueueStrategy forName(String name) {
        String normalized = name == null ? "default" : name.trim().toLowerCase(Locale.ROOT);
        switch (normalized) {
            case "":
            case "default":
                return new DefaultStrategy();
            case "promote_shortest":
                return new PromoteShortestStrategy();
            case "hrrn":
                return new HrrnStrategy();
            default:
                throw new IllegalArgumentException("prefill-queue-strategy: unknown value '" + name
                        + "'; choose one of " + String.join(", ", NAMES));
        }
    }
}
