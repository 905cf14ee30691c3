package io.kvroute.router.policy;

/**
 * Chooses one worker for one request. Implementations are pure Java: no HTTP, ZeroMQ or tokenizer
 * types; time and randomness are injected. {@link #select} is called concurrently from request
 * threads and must not block.
 */
public interface RoutingPolicy {

    /** The policy's config name, used as the {@code policy} metric label. */
    String name();

    /** True when the policy reads {@link RoutingRequest#tokenIds()}: the router then tokenizes every request. */
    default boolean needsTokens() {
        return false;
    }

    /** Picks a worker from {@code request.candidates()}. */
    Decision select(RoutingRequest request);
}
