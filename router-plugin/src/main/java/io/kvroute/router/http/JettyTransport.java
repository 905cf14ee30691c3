package io.kvroute.router.http;

import io.kvroute.router.dispatch.DispatchClock;
import io.kvroute.router.dispatch.Upstream;
import io.kvroute.router.lora.AdapterLoadClient;
import io.kvroute.router.metrics.RouterMetrics;
import java.util.function.LongSupplier;
import org.eclipse.jetty.client.HttpClient;

/**
 * The router's transport-neutral client-side interfaces, implemented on its one upstream Jetty
 * {@link HttpClient}: what the composition root hands the dispatch core ({@link Upstream},
 * {@link DispatchClock}) and LoRA routing ({@link AdapterLoadClient}). The implementations stay
 * package-private; the root sees only these factories and the interfaces they return. Each call builds
 * a new adapter over {@code client} (the upstream keeps its own parsed-URI cache), so the root calls
 * each once per router.
 */
public final class JettyTransport {

    private JettyTransport() {
    }

    /** Worker requests sent through {@code client}; stage timings of the overhead meters read {@code nanoClock}. */
    public static Upstream upstream(HttpClient client, RouterMetrics metrics, LongSupplier nanoClock) {
        return new JettyUpstream(client, metrics, nanoClock);
    }

    /** {@code nanoClock}, with retries and timers scheduled on {@code client}'s scheduler. */
    public static DispatchClock dispatchClock(HttpClient client, LongSupplier nanoClock) {
        return new JettyClock(client, nanoClock);
    }

    /** The HTTP adapter that loads LoRA adapters onto workers (dynamic loading). */
    public static AdapterLoadClient adapterLoader(HttpClient client) {
        return new JettyAdapterLoader(client);
    }
}
