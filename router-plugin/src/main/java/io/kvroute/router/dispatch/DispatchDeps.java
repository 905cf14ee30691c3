package io.kvroute.router.dispatch;

import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.lora.LoraRouting;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.InFlightCounters;
import java.util.function.Consumer;

/**
 * What plain and PD dispatch both need from the router, built once per router by the composition root.
 * The policies each kind picks workers with come apart: {@link PlainRouting} for {@link Dispatch},
 * {@link PdRouting} for {@link PdDispatch}. All thread-safe.
 *
 * @param onDispatched records a cache-aware decision in every prefix index it matched, called once the chosen
 *     worker accepted the request (see {@code OwnershipOnAccept})
 * @param lora adapter resolution, placement bookkeeping and dynamic loading, or null (no adapter handling)
 */
public record DispatchDeps(
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
        LoraRouting lora) {}
