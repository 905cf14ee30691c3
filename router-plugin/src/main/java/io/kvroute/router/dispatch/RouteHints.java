package io.kvroute.router.dispatch;

import io.kvroute.router.policy.PromptExtras;

/**
 * Per-request routing inputs beyond the candidates and tokens.
 *
 * @param sessionKey the session affinity header's value, or null
 * @param routingText raw prompt text for character-keyed cache modes when no token ids exist, or null
 * @param modelLabel the model id for metric labels ("default" when the request names none)
 * @param adapter the LoRA adapter the request names, or null; it scopes the request's cache keys
 * @param extras what else vLLM folds into the request's block hashes (cache salt, multimodal items, prompt
 *        embeddings), for the exact KV index; never null
 */
public record RouteHints(String sessionKey, String routingText, String modelLabel, String adapter, PromptExtras extras) {

    public RouteHints {
        extras = extras == null ? PromptExtras.NONE : extras;
    }

    public RouteHints(String sessionKey, String routingText, String modelLabel, String adapter) {
        this(sessionKey, routingText, modelLabel, adapter, PromptExtras.NONE);
    }

    public RouteHints(String sessionKey, String routingText, String modelLabel) {
        this(sessionKey, routingText, modelLabel, null);
    }
}
