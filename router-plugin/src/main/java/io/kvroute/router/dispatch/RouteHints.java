package io.kvroute.router.dispatch;

/**
 * Per-request routing inputs beyond the candidates and tokens.
 *
 * @param sessionKey the session affinity header's value, or null
 * @param routingText raw prompt text for character-keyed cache modes when no token ids exist, or null
 * @param modelLabel the model id for metric labels ("default" when the request names none)
 * @param adapter the LoRA adapter the request names, or null; it scopes the request's cache keys
 */
public record RouteHints(String sessionKey, String routingText, String modelLabel, String adapter) {

    public RouteHints(String sessionKey, String routingText, String modelLabel) {
        this(sessionKey, routingText, modelLabel, null);
    }
}
