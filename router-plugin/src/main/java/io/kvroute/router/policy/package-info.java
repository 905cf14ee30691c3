/**
 * Routing policies: pure Java, no transport types. Start with {@link io.kvroute.router.policy.RoutingPolicy}
 * and {@link io.kvroute.router.policy.Policies}; a request's inputs arrive as an immutable
 * {@link io.kvroute.router.policy.RoutingRequest} and leave as a {@link io.kvroute.router.policy.Decision}.
 * The cache-aware admission ladder is {@link io.kvroute.router.policy.CacheAwarePolicy} (per-worker
 * checks in {@code CacheAdmission}, keys in {@code CacheKey}); session affinity wraps any policy in
 * {@link io.kvroute.router.policy.StickySessionPolicy}. docs/routing.md draws the ladder. The exact KV index
 * ({@link io.kvroute.router.policy.ExactPrefixSource}) asks each worker with its own engine's ids
 * ({@link io.kvroute.router.policy.EngineTokenIds}) and what else the engine hashes into the request's blocks
 * ({@link io.kvroute.router.policy.PromptExtras}).
 */
package io.kvroute.router.policy;
