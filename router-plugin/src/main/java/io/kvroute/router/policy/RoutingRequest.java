package io.kvroute.router.policy;

import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.Objects;
import java.util.function.ToIntFunction;

/**
 * Everything a policy may look at for one request, captured once at ingress and never re-read:
 * the routable candidates (already filtered by model, role and health), the router-local
 * in-flight counts, and the request's size.
 *
 * @param candidates routable workers for this request, in registry order; never empty
 * @param inFlight router-local in-flight requests per worker id, read once for every candidate when the
 *     request is built ({@link FrozenInFlight}): one decision sees one snapshot
 * @param inputTokens the request's input length in tokens (exact or estimated)
 * @param sessionKey the session affinity key, or null
 * @param tokenIds the request's token ids from ingress tokenization (read-only), or null
 * @param loads the engine load snapshot captured once at ingress, or null when there is no load plane
 * @param routingText the request's text for char / sampled prefix keys (rendered prompt or joined
 *     messages), or null
 * @param adapter the LoRA adapter the request names, or null for the base model; cache keys are
 *     scoped by it, so the same prompt under two adapters is never a hit for the other
 * @param engineTokenIds a chat's ids as each engine computes them, for the exact KV index (whose primary ids
 *     are {@code tokenIds}), or null when {@code tokenIds} hold for every engine
 * @param extras what else vLLM folds into the request's block hashes (a cache salt, multimodal items, prompt
 *     embeddings), for the exact KV index; never null ({@link PromptExtras#NONE})
 */
public record RoutingRequest(
        List<Worker> candidates, ToIntFunction<String> inFlight, long inputTokens, String sessionKey, int[] tokenIds,
        io.kvroute.router.load.EngineLoadSnapshot loads, String routingText, String adapter,
        EngineTokenIds engineTokenIds, PromptExtras extras) {

    public RoutingRequest(List<Worker> candidates, ToIntFunction<String> inFlight, long inputTokens, String sessionKey,
            int[] tokenIds, io.kvroute.router.load.EngineLoadSnapshot loads, String routingText, String adapter,
            EngineTokenIds engineTokenIds) {
        this(candidates, inFlight, inputTokens, sessionKey, tokenIds, loads, routingText, adapter, engineTokenIds,
                PromptExtras.NONE);
    }

    public RoutingRequest(List<Worker> candidates, ToIntFunction<String> inFlight, long inputTokens, String sessionKey,
            int[] tokenIds, io.kvroute.router.load.EngineLoadSnapshot loads, String routingText, String adapter) {
        this(candidates, inFlight, inputTokens, sessionKey, tokenIds, loads, routingText, adapter, null);
    }

    public RoutingRequest(List<Worker> candidates, ToIntFunction<String> inFlight, long inputTokens, String sessionKey,
            int[] tokenIds, io.kvroute.router.load.EngineLoadSnapshot loads, String routingText) {
        this(candidates, inFlight, inputTokens, sessionKey, tokenIds, loads, routingText, null);
    }

    public RoutingRequest(List<Worker> candidates, ToIntFunction<String> inFlight, long inputTokens, String sessionKey) {
        this(candidates, inFlight, inputTokens, sessionKey, null, null, null);
    }

    public RoutingRequest(List<Worker> candidates, ToIntFunction<String> inFlight, long inputTokens, String sessionKey,
            int[] tokenIds) {
        this(candidates, inFlight, inputTokens, sessionKey, tokenIds, null, null);
    }

    public RoutingRequest(List<Worker> candidates, ToIntFunction<String> inFlight, long inputTokens, String sessionKey,
            int[] tokenIds, io.kvroute.router.load.EngineLoadSnapshot loads) {
        this(candidates, inFlight, inputTokens, sessionKey, tokenIds, loads, null);
    }

    public RoutingRequest {
        Objects.requireNonNull(candidates, "candidates");
        Objects.requireNonNull(inFlight, "inFlight");
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("candidates must not be empty");
        }
        candidates = List.copyOf(candidates);
        inFlight = FrozenInFlight.of(candidates, inFlight);
        extras = extras == null ? PromptExtras.NONE : extras;
    }

    /** The same request over another candidate list (a fallback over a subset). */
    RoutingRequest withCandidates(List<Worker> subset) {
        return new RoutingRequest(subset, inFlight, inputTokens, sessionKey, tokenIds, loads, routingText, adapter,
                engineTokenIds, extras);
    }
}
