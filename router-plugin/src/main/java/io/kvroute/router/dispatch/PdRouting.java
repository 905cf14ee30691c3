package io.kvroute.router.dispatch;

import io.kvroute.router.policy.RoutingPolicy;
import java.util.function.LongSupplier;

/**
 * What a {@link PdDispatch} picks its prefill/decode pair with and bootstraps it by, apart from the
 * collaborators it shares with plain dispatch ({@link DispatchDeps}). Built once per router; all
 * thread-safe.
 *
 * @param prefillPolicy chooses the prefill worker ({@code --prefill-policy}, else the main policy's instance)
 * @param prefillSessionPolicy its session-sticky variant, for a request that carries a session key
 * @param decodePolicy chooses the decode worker
 * @param rooms raw random longs for the PD bootstrap rooms
 */
public record PdRouting(
        RoutingPolicy prefillPolicy,
        RoutingPolicy prefillSessionPolicy,
        RoutingPolicy decodePolicy,
        LongSupplier rooms) {

    /** The prefill policy for a request with {@code sessionKey} (null: none). */
    RoutingPolicy prefillFor(String sessionKey) {
        return sessionKey != null ? prefillSessionPolicy : prefillPolicy;
    }
}
