/**
 * Routing policies: pure Java, no transport types. Start with {@link io.kvroute.router.policy.RoutingPolicy}
 * and {@link io.kvroute.router.policy.Policies}; a request's inputs arrive as an immutable
 * {@link io.kvroute.router.policy.RoutingRequest} and leave as a {@link io.kvroute.router.policy.Decision}.
 */
package io.kvroute.router.policy;
