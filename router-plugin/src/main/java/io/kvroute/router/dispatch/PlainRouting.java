package io.kvroute.router.dispatch;

import io.kvroute.router.policy.RoutingPolicy;

/**
 * What a plain (non-PD) {@link Dispatch} picks workers with, apart from the collaborators it shares
 * with PD dispatch ({@link DispatchDeps}): the main policy, and its session-sticky variant for a
 * request that carries a session key (the same instance when the main policy already pins sessions).
 * Built once per router; the policies are thread-safe.
 */
public record PlainRouting(RoutingPolicy policy, RoutingPolicy sessionPolicy) {

    /** The policy for a request with {@code sessionKey} (null: none). */
    RoutingPolicy forSession(String sessionKey) {
        return sessionKey != null ? sessionPolicy : policy;
    }
}
