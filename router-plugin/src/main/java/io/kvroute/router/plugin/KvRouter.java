package io.kvroute.router.plugin;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvroute.router.accesslog.AccessLog;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.discovery.KubernetesDiscovery;
import io.kvroute.router.dispatch.OutcomeListeners;
import io.kvroute.router.dispatch.UpstreamRequests;
import io.kvroute.router.http.RouterHandler;
import io.kvroute.router.ingress.InferenceFrontDoor;
import io.kvroute.router.kvevents.KvEventsPlane;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.lora.AdapterDirectory;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.HealthChecker;
import io.kvroute.router.worker.InFlightCounters;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.component.Graceful;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router plugin as a Jetty lifecycle component: it owns the worker registry, the upstream
 * {@link HttpClient}, health checking, the policy and the meters, and exposes one core
 * {@link Handler}. Embedders call {@link #mount(Server, RouterConfig)}; the standalone process is
 * {@link RouterMain}. The object graph is wired in one place, {@link RouterAssembly}; this class
 * starts, drains and stops it and is the embedders' API.
 *
 * <p>Lifecycle: the HTTP clients and the health scheduler are managed beans, so starting the host
 * server (or this component) starts them; stopping drains, stops health checks, the scraper and the
 * planes, then the beans.
 */
public final class KvRouter extends ContainerLifeCycle implements Graceful {

    private static final Logger LOG = LoggerFactory.getLogger(KvRouter.class);

    private final RouterConfig config;
    /** The router's object graph, wired once (the composition root). */
    private final RouterAssembly parts;

    private KvRouter(RouterConfig config, KubernetesClient kubernetes, RequestTracer tracer, LongSupplier nanoClock) {
        this(config, kubernetes, tracer, nanoClock, InstantSource.system());
    }

    private KvRouter(RouterConfig config, KubernetesClient kubernetes, RequestTracer tracer, LongSupplier nanoClock,
            InstantSource wallClock) {
        this.config = Objects.requireNonNull(config, "config");
        this.parts = new RouterAssembly(config, kubernetes, Objects.requireNonNull(tracer, "tracer"),
                Objects.requireNonNull(nanoClock, "nanoClock"), Objects.requireNonNull(wallClock, "wallClock"));
        addBean(parts.upstreamClient);
        addBean(parts.healthScheduler);
        addBean(parts.scrapeClient);
    }

    /** A router for {@code config}; not started. */
    public static KvRouter create(RouterConfig config) {
        return new KvRouter(config, null, configuredTracer(config), System::nanoTime);
    }

    /**
     * A router for {@code config} on {@code nanoClock} (e.g. a test's fake clock) instead of
     * {@link System#nanoTime()}: the front door, the dispatch core, breakers, sessions, the load plane
     * and the drain deadline all read it; not started.
     */
    public static KvRouter create(RouterConfig config, LongSupplier nanoClock) {
        return new KvRouter(config, null, configuredTracer(config), nanoClock);
    }

    /**
     * As {@link #create(RouterConfig, LongSupplier)}, with {@code wallClock} as the date that chat templates'
     * {@code strftime_now} formats (e.g. a test's fixed clock); not started.
     */
    public static KvRouter create(RouterConfig config, LongSupplier nanoClock, InstantSource wallClock) {
        return new KvRouter(config, null, configuredTracer(config), nanoClock, wallClock);
    }

    /**
     * A router whose {@code --service-discovery} uses {@code kubernetes} (not closed by the router)
     * instead of fabric8's default in-cluster/kubeconfig resolution; not started.
     */
    public static KvRouter create(RouterConfig config, KubernetesClient kubernetes) {
        return new KvRouter(config, kubernetes, configuredTracer(config), System::nanoTime);
    }

    /** A router for {@code config} tracing through {@code tracer} (closed when the router stops); not started. */
    public static KvRouter create(RouterConfig config, RequestTracer tracer) {
        return new KvRouter(config, null, tracer, System::nanoTime);
    }

    private static RequestTracer configuredTracer(RouterConfig config) {
        return RequestTracer.create(config.observability().otlpTracesEndpoint(),
                config.observability().traceSamplingRatio(), "kvroute-router");
    }

    /**
     * Mounts the router into an existing server in one call: the router's handler runs first and
     * declines paths it does not own, so the server's existing handler keeps serving the rest. The
     * router's lifecycle follows the server's.
     */
    public static KvRouter mount(Server server, RouterConfig config) {
        KvRouter router = create(config);
        Handler existing = server.getHandler();
        Handler.Sequence sequence = new Handler.Sequence();
        sequence.addHandler(router.handler(false));
        if (existing != null) {
            sequence.addHandler(existing);
        }
        server.setHandler(MetricsPort.install(server, config, router.metrics(), sequence));
        if (config.observability().accessLog() != null && server.getRequestLog() == null) {
            // --access-log in a host server too (jetty-home module, embedding): the host's own request log wins
            server.setRequestLog(AccessLog.forTarget(config.observability().accessLog()));
        }
        server.addBean(router);
        return router;
    }

    /** {@link #mount(Server, RouterConfig)} with a YAML plugin config file (keys are flag names). */
    public static KvRouter mount(Server server, Path configFile) {
        return mount(server, RouterOptions.parse("--config", configFile.toString()));
    }

    /**
     * The router's handler.
     *
     * @param claimUnknownPaths true for a standalone server (unknown paths get a JSON 404); false
     *     when other handlers follow
     */
    public Handler handler(boolean claimUnknownPaths) {
        return new RouterHandler(parts.handlerContext, parts.frontDoor, claimUnknownPaths);
    }

    /** The router's transport-neutral inference entry, shared by its Jetty handler and any servlet. */
    public InferenceFrontDoor frontDoor() {
        return parts.frontDoor;
    }

    /** Where upstream-request hooks are added ({@code addHook}): they apply to every upstream request of this router. */
    public UpstreamRequests upstreamRequests() {
        return parts.requests;
    }

    /** Where per-request outcome listeners are added ({@code add}). */
    public OutcomeListeners outcomes() {
        return parts.outcomes;
    }

    /** The KV-event plane, or null with {@code --cache-index approximate}. */
    public KvEventsPlane kvEvents() {
        return parts.kvEvents;
    }

    public LoadPlane loads() {
        return parts.loads;
    }

    /** Which worker serves which LoRA adapter. */
    public AdapterDirectory adapters() {
        return parts.adapters;
    }

    public TokenizerRegistry tokenizers() {
        return parts.tokenizers;
    }

    /**
     * Graceful drain: {@code /readyz} and new requests answer 503 at once; in-flight requests and
     * streams may finish for up to {@code --shutdown-drain-secs}; the rest are then aborted with a
     * clear error. Returns how many were aborted. Idempotent.
     */
    public int drain() throws InterruptedException {
        beginDrain();
        long deadline = drainStartNanos + config.timeouts().shutdownDrainNanos();
        int aborted = parts.active.awaitThenAbort(deadline, "the router is shutting down and the drain period ("
                + config.timeouts().shutdownDrainSecs() + " s) has ended");
        if (aborted > 0) {
            LOG.warn("drain period over: aborted {} in-flight request(s)", aborted);
        }
        return aborted;
    }

    private volatile long drainStartNanos;

    private synchronized void beginDrain() {
        if (!parts.active.draining()) {
            drainStartNanos = parts.nanoClock.getAsLong();
            parts.active.beginDrain();
        }
    }

    /**
     * Jetty's graceful-shutdown hook, called by {@code Server.stop()} before connectors close when
     * the router is mounted in a host server: starts the drain and completes once no request is in
     * flight (the server's stop timeout bounds the wait; {@link #doStop} aborts leftovers).
     */
    @Override
    public CompletableFuture<Void> shutdown() {
        beginDrain();
        return parts.active.drained();
    }

    @Override
    public boolean isShutdown() {
        return parts.active.draining();
    }

    /** Client requests being served now. */
    public int activeRequests() {
        return parts.active.size();
    }

    public boolean draining() {
        return parts.active.draining();
    }

    public Breakers breakers() {
        return parts.breakers;
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        // As Jetty's ProxyHandler does once its client has started (the client installs these defaults
        // in its own start): no transparent content decoding, so no Accept-Encoding is added and bytes
        // are relayed as the worker sent them, and no protocol handlers, so a worker's 401 goes back as
        // an answer instead of through authentication logic.
        parts.upstreamClient.getContentDecoderFactories().clear();
        parts.upstreamClient.getProtocolHandlers().clear();
        parts.loads.start();
        parts.scraper.start();
        if (parts.kvEvents != null) {
            parts.kvEvents.start();
        }
        for (Worker worker : parts.registry.fleet().all()) {
            parts.loadFeeds.subscribe(worker);
        }
        parts.health.start();
        if (parts.discovery != null) {
            parts.discovery.start();
        }
    }

    @Override
    protected void doStop() throws Exception {
        if (parts.discovery != null) {
            parts.discovery.close(); // the fleet stays as it is while the drain runs
        }
        drain();
        parts.health.close();
        parts.scraper.close();
        parts.loads.close();
        if (parts.kvEvents != null) {
            parts.kvEvents.close();
        }
        parts.tokenizers.close();
        parts.tracer.close();
        parts.frontDoor.close();
        super.doStop();
    }

    public RouterConfig config() {
        return config;
    }

    public WorkerRegistry workers() {
        return parts.registry;
    }

    public RouterMetrics metrics() {
        return parts.metrics;
    }

    public InFlightCounters inFlight() {
        return parts.inFlight;
    }

    public HealthChecker health() {
        return parts.health;
    }

    /** Kubernetes discovery, or null without {@code --service-discovery}. */
    public KubernetesDiscovery discovery() {
        return parts.discovery;
    }

    /** The policy choosing PD prefill workers (the same instance as the main policy unless {@code --prefill-policy}). */
    RoutingPolicy prefillPolicy() {
        return parts.policies.prefill();
    }

    /** The main policy ({@code --policy}). */
    RoutingPolicy policy() {
        return parts.policies.main();
    }
}
