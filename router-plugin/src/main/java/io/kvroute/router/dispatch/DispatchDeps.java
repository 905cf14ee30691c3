package io.kvroute.router.dispatch;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.lora.LoraRouting;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.InFlightCounters;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * What the dispatch core needs from the router, built once per router by the edge. All thread-safe.
 *
 * @param onDispatched records a cache-aware decision in every prefix index it matched, called once the chosen
 *     worker accepted the request (see {@code OwnershipOnAccept})
 * @param rooms raw random longs for PD bootstrap rooms
 * @param lora adapter resolution, placement bookkeeping and dynamic loading, or null (no adapter handling)
 */
public record DispatchDeps(
        RouterConfig config,
        RoutingPolicy policy,
        RoutingPolicy sessionPolicy,
        RoutingPolicy prefillPolicy,
        RoutingPolicy prefillSessionPolicy,
        RoutingPolicy decodePolicy,
        InFlightCounters inFlight,
        Breakers breakers,
        RouterMetrics metrics,
        LoadPlane loads,
        Consumer<Decision> onDispatched,
        InFlightRequests active,
        Upstream upstream,
        UpstreamRequests requests,
        DispatchClock clock,
        RetryRule retry,
        OutcomeListener outcomes,
        LongSupplier rooms,
        LoraRouting lora) {}
