package io.kvroute.router.http;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.dispatch.DispatchClock;
import io.kvroute.router.dispatch.Upstream;
import io.kvroute.router.ingress.ActiveRequests;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.HealthChecker;
import io.kvroute.router.worker.InFlightCounters;
import io.kvroute.router.worker.WorkerRegistry;
import org.eclipse.jetty.client.HttpClient;

/**
 * The router's shared collaborators, handed to handlers and dispatches. All thread-safe.
 * {@code nanoClock} is the router's one nanosecond clock (the front door, the dispatch core and the
 * planes read it; tests inject a fake one through {@code KvRouter.create(config, nanoClock)}).
 */
public record RouterContext(
        RouterConfig config,
        WorkerRegistry registry,
        InFlightCounters inFlight,
        Breakers breakers,
        HealthChecker health,
        RoutingPolicy policy,
        HttpClient client,
        RouterMetrics metrics,
        ActiveRequests active,
        io.kvroute.router.tokenize.TokenizerRegistry tokenizers,
        RoutingPolicy prefillPolicy,
        RoutingPolicy decodePolicy,
        io.kvroute.router.load.LoadPlane loads,
        RoutingPolicy sessionPolicy,
        RoutingPolicy prefillSessionPolicy,
        java.util.List<io.kvroute.router.policy.CacheAwarePolicy> cacheAwarePolicies,
        io.kvroute.router.trace.RequestTracer tracer,
        io.kvroute.router.worker.ReadyPool readyPool,
        io.kvroute.router.lora.LoraRouting lora,
        java.util.function.LongSupplier nanoClock) {

    /** The HTTP adapter that loads LoRA adapters onto workers (dynamic loading). */
    public static io.kvroute.router.lora.AdapterLoadClient adapterLoader(HttpClient client) {
        return new JettyAdapterLoader(client);
    }

    /** The dispatch core's upstream: worker requests sent through {@link #client}. */
    public Upstream upstream() {
        return new JettyUpstream(client, metrics, nanoClock);
    }

    /** The dispatch core's clock: {@link #nanoClock}, with retries and timers scheduled on {@link #client}'s scheduler. */
    public DispatchClock dispatchClock() {
        return new JettyClock(client, nanoClock);
    }

    /** After a dispatch: records the request's prefix for the chosen worker in every cache-aware index it matched. */
    public void onDispatched(io.kvroute.router.policy.Decision decision) {
        if (decision.cacheAware() == null) {
            return;
        }
        for (io.kvroute.router.policy.CacheAwarePolicy policy : cacheAwarePolicies) {
            policy.recordDispatch(decision);
        }
    }
}
