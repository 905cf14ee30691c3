package io.kvroute.router.plugin;

import io.kvroute.router.accesslog.AccessLog;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.discovery.KubernetesDiscovery;
import io.kvroute.router.dispatch.DispatchDeps;
import io.kvroute.router.dispatch.MetricsOutcomes;
import io.kvroute.router.dispatch.OutcomeListeners;
import io.kvroute.router.dispatch.RetryRule;
import io.kvroute.router.dispatch.UpstreamRequests;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvroute.router.ingress.ActiveRequests;
import io.kvroute.router.ingress.InferenceFrontDoor;
import io.kvroute.router.http.RouterContext;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.router.http.RouterHandler;
import io.kvroute.router.load.LoadEndpoints;
import io.kvroute.router.config.LoadSourceConfig;
import io.kvroute.router.load.EngineMetricNames;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.load.MetricsScraper;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.load.LoadPlaneConfig;
import io.kvroute.router.kvevents.KvEventsPlane;
import io.kvroute.router.lora.AdapterDirectory;
import io.kvroute.router.lora.ModelListRefresh;
import io.kvroute.router.lora.LoraRouting;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.policy.StickySessionPolicy;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.CircuitBreaker;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.Policies;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.worker.HealthChecker;
import io.kvroute.router.worker.InFlightCounters;
import io.kvroute.router.worker.ReadyPool;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import java.nio.file.Path;
import java.util.Objects;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The router plugin as a Jetty lifecycle component: it owns the worker registry, the upstream
 * {@link HttpClient}, health checking, the policy and the meters, and exposes one core
 * {@link Handler}. Embedders call {@link #mount(Server, RouterConfig)}; the standalone process is
 * {@link RouterMain}.
 *
 * <p>Lifecycle: the HTTP client is a managed bean, so starting the host server (or this component)
 * starts it; stopping stops health checks first, then the client.
 */
public final class KvRouter extends ContainerLifeCycle implements org.eclipse.jetty.util.component.Graceful {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KvRouter.class);

    private final RouterConfig config;
    private final WorkerRegistry registry = new WorkerRegistry();
    private final InFlightCounters inFlight = new InFlightCounters();
    private final RouterMetrics metrics = new RouterMetrics();
    private final HttpClient client;
    private final RoutingPolicy policy;
    private final HealthChecker health;
    private final Breakers breakers;
    /** The router's one nanosecond clock: every component that measures or schedules by time reads it. */
    private final java.util.function.LongSupplier nanoClock;
    private final ActiveRequests active;
    private final RouterContext context;
    private final TokenizerRegistry tokenizers;
    private final LoadPlane loads;
    private final HttpClient scrapeClient;
    private final MetricsScraper scraper;
    /** Kubernetes pod discovery, or null without {@code --service-discovery}. */
    private final KubernetesDiscovery discovery;
    private final InferenceFrontDoor frontDoor;
    private final UpstreamRequests requests;
    private final OutcomeListeners outcomes;
    private final RequestTracer tracer;
    /** What requests may be routed to, rebuilt on fleet and breaker changes instead of scanned per request. */
    private final ReadyPool readyPool;
    private final java.util.Set<String> openBreakers = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The engines' KV events ({@code --cache-index exact|auto}), or null with {@code approximate}. */
    private final KvEventsPlane kvEvents;
    /** Decides which workers' KV events feed the exact index (a no-op without the plane). */
    private final KvEventsWiring kvWiring;
    /** Which worker serves which LoRA adapter (model lists, /metrics, the router's own dispatches). */
    private final AdapterDirectory adapters;

    private KvRouter(RouterConfig config, KubernetesClient kubernetes, RequestTracer tracer,
            java.util.function.LongSupplier nanoClock) {
        this.config = Objects.requireNonNull(config, "config");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.active = new ActiveRequests(nanoClock);
        this.tracer = Objects.requireNonNull(tracer, "tracer");
        this.readyPool = new ReadyPool(config.routing().modelIds());
        QueuedThreadPool clientThreads = new QueuedThreadPool();
        clientThreads.setName("kvroute-upstream");
        clientThreads.setDaemon(true);
        this.client = new HttpClient();
        client.setExecutor(clientThreads);
        client.setConnectTimeout(config.timeouts().connectMillis());
        client.setMaxConnectionsPerDestination(4096);
        client.setMaxRequestsQueuedPerDestination(65536);
        client.setFollowRedirects(false);
        client.setUserAgentField(null);
        // No cookie store: a worker's Set-Cookie must never ride along on another client's request (it
        // also spares a URI parse per request). See doStart for the rest of the gateway configuration.
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        addBean(client);
        this.policy = buildPolicy(config.routing().policy());
        // The router's scheduler for its periodic work (health rounds); started and stopped with the router.
        org.eclipse.jetty.util.thread.ScheduledExecutorScheduler scheduler =
                new org.eclipse.jetty.util.thread.ScheduledExecutorScheduler("kvroute-health", true);
        addBean(scheduler);
        this.health = new HealthChecker(registry, client, config.health(), w -> { },
                EngineType.parse(config.loadSource().engineType()), scheduler);
        this.breakers = new Breakers(config.breaker(), nanoClock,
                (workerId, transition) -> {
                    registry.get(workerId).ifPresent(w -> {
                        LOG.warn("worker {} circuit breaker {} -> {}", w.url(), transition.from(), transition.to());
                        metrics.breakerTransition(w.url(), label(transition.from()), label(transition.to()));
                    });
                    if (transition.to() == CircuitBreaker.State.OPEN) {
                        openBreakers.add(workerId);
                    } else {
                        openBreakers.remove(workerId);
                    }
                    refreshReadyPool();
                });
        this.tokenizers = loadTokenizers(config);
        // PD prefill: --policy unless --prefill-policy names another (the same instance, so one prefix index).
        RoutingPolicy prefillPolicy = config.pd().prefillPolicy() == null ? policy : buildPolicy(config.pd().prefillPolicy());
        RoutingPolicy decodePolicy = Policies.createDecode(config.pd().decodePolicy(), config.routing().minLoadChoices());
        this.loads = new LoadPlane(LoadPlaneConfig.defaults().withFreshnessWindow(
                java.time.Duration.ofNanos(config.loadSource().freshnessNanos()))
                .withMetricsStaleness(java.time.Duration.ofMillis(config.loadSource().stalenessMs())),
                nanoClock, metrics.registry());
        // A client of its own for /metrics scrapes: one connection per worker, never competing with traffic.
        this.scrapeClient = new HttpClient();
        scrapeClient.setMaxConnectionsPerDestination(1);
        scrapeClient.setConnectTimeout(config.loadSource().scrapeTimeoutMs());
        scrapeClient.setFollowRedirects(false);
        scrapeClient.setHttpCookieStore(new HttpCookieStore.Empty());
        addBean(scrapeClient);
        this.scraper = new MetricsScraper(loads, scrapeClient, config.loadSource().scrapeIntervalMs(),
                config.loadSource().scrapeTimeoutMs(), LoadSourceConfig.MAX_SCRAPE_BACKOFF_MS, nanoClock,
                metrics.registry());
        RoutingPolicy sessionPolicy = policy instanceof StickySessionPolicy ? policy
                : Policies.sticky(policy, policy.name(), config.session().idleSecs(), nanoClock);
        RoutingPolicy prefillSessionPolicy = prefillPolicy == policy ? sessionPolicy
                : prefillPolicy instanceof StickySessionPolicy ? prefillPolicy
                : Policies.sticky(prefillPolicy, prefillPolicy.name(), config.session().idleSecs(), nanoClock);
        // LoRA adapters: model lists and /metrics feed one directory; placement and dispatch read its snapshot
        this.adapters = new AdapterDirectory();
        ModelListRefresh modelLists = new ModelListRefresh(config.lora().modelsRefreshNanos(), System::nanoTime);
        health.onModelCards((id, cards) -> adapters.updateCards(id, cards.base(), cards.adapters()),
                id -> modelLists.due(id, !adapters.current().of(id).listed().isEmpty()
                        || adapters.current().of(id).maxLoras() > 0));
        scraper.onLoraReading(adapters::updateLoad);
        for (CacheAwarePolicy cacheAware : cacheAwarePolicies.values()) {
            cacheAware.useAdapterPlacement(adapters::current, config.lora().affinityWeight());
        }
        LoraRouting lora = new LoraRouting(adapters, config.lora(), RouterContext.adapterLoader(client),
                metrics.registry(), nanoClock);
        this.context = new RouterContext(config, registry, inFlight, breakers, health, policy, client, metrics, active,
                tokenizers, prefillPolicy, decodePolicy, loads, sessionPolicy, prefillSessionPolicy,
                java.util.List.copyOf(cacheAwarePolicies.values()), tracer, readyPool, lora, nanoClock);
        this.requests = new UpstreamRequests(config.timeouts().requestMillis(), config.timeouts().streamIdleMillis());
        // W3C trace context of the call's own span on every upstream request (no-op when tracing is off)
        requests.addHook((target, headers) -> target.span().inject(headers::put));
        this.outcomes = new OutcomeListeners(new MetricsOutcomes(metrics));
        DispatchDeps deps = new DispatchDeps(config, policy, sessionPolicy, prefillPolicy, prefillSessionPolicy,
                decodePolicy, inFlight, breakers, metrics, loads, context::onDispatched, active, context.upstream(),
                requests, context.dispatchClock(), RetryRule.from(config.retry(), config.pd().busyRetryNanos(),
                        () -> java.util.concurrent.ThreadLocalRandom.current().nextDouble()), outcomes,
                () -> java.util.concurrent.ThreadLocalRandom.current().nextLong(), lora);
        this.frontDoor = new InferenceFrontDoor(deps, active, tokenizers, readyPool, registry, nanoClock);
        for (CacheAwarePolicy cacheAware : cacheAwarePolicies.values()) {
            cacheAware.prefixIndexes().forEach((mode, index) -> metrics.bindPrefixIndex(cacheAware.name(), mode, index));
        }
        tokenizers.chatPrefixCaches().forEach(metrics::bindChatPrefixCache);
        tokenizers.chatCacheDeclines().forEach(metrics::chatCacheDeclined);
        tokenizers.textOnlyModels().forEach(metrics::templateTextOnly);
        this.kvWiring = KvEventsWiring.create(config, metrics.registry(), cacheAwarePolicies.values(), nanoClock);
        this.kvEvents = kvWiring.plane();
        // vllm:cache_config_info's block size confirms (or refuses) a worker's KV-event template
        scraper.onBlockSize((workerId, blockSize) -> registry.get(workerId)
                .ifPresent(w -> kvWiring.engineBlockSize(w, blockSize)));
        metrics.registerEndpointSeriesAtZero(java.util.Arrays.stream(io.kvroute.router.dispatch.ApiKind.values())
                .map(kind -> kind.path).toList());
        metrics.bindDraining(active::draining);
        metrics.bindActive(active::size);
        registry.addListener(change -> refreshReadyPool());
        registry.addListener(change -> {
            Worker worker = change.worker();
            String id = worker.id();
            if (change.kind() == WorkerRegistry.ChangeKind.ADDED) {
                metrics.bindInFlight(worker.url(), inFlight.counter(id));
                metrics.bindHealthy(worker.url(), () -> registry.fleet().isHealthy(id));
                metrics.bindBreakerState(worker.url(), () -> breakers.state(id).ordinal());
                metrics.registerWorkerSeriesAtZero(worker.url());
                for (CacheAwarePolicy cacheAware : cacheAwarePolicies.values()) {
                    cacheAware.prefixIndexes().forEach((mode, index) ->
                            metrics.bindPrefixOwned(cacheAware.name(), mode, worker.url(), id, index));
                }
                subscribe(worker);
                kvWiring.subscribe(worker);
            } else if (change.kind() == WorkerRegistry.ChangeKind.UPDATED) {
                subscribe(worker);
                kvWiring.subscribe(worker);
            } else if (change.kind() == WorkerRegistry.ChangeKind.REMOVED) {
                metrics.forgetWorker(worker.url());
                scraper.removeWorker(id);
                loads.removeWorker(id);
                kvWiring.forget(id);
                breakers.forget(id);
                adapters.removeWorker(id);
                for (CacheAwarePolicy cacheAware : cacheAwarePolicies.values()) {
                    cacheAware.removeWorker(id);
                }
            }
        });
        // operator-stated KV-event endpoints (vLLM has no /server_info); an advert from /server_info replaces them
        io.kvroute.router.worker.KvEventsTemplates templates = config.kvEvents().templates();
        for (String url : config.routing().workerUrls()) {
            registry.add(templates.apply(Worker.regular(url)));
        }
        for (String entry : config.pd().prefillUrls()) {
            int eq = entry.lastIndexOf('=');
            registry.add(templates.apply(eq < 0 ? Worker.of(entry, WorkerRole.PREFILL, null)
                    : Worker.of(entry.substring(0, eq), WorkerRole.PREFILL, Integer.parseInt(entry.substring(eq + 1)))));
        }
        for (String url : config.pd().decodeUrls()) {
            registry.add(templates.apply(Worker.of(url, WorkerRole.DECODE, null)));
        }
        this.discovery = !config.serviceDiscovery().enabled() ? null : KubernetesDiscovery.create(kubernetes,
                config.serviceDiscovery(), templates, config.kvEvents().annotation(), registry, inFlight::get,
                health::probeAll, config.timeouts().shutdownDrainNanos(), metrics.registry());
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
    public static KvRouter create(RouterConfig config, java.util.function.LongSupplier nanoClock) {
        return new KvRouter(config, null, configuredTracer(config), nanoClock);
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
        return new RouterHandler(context, frontDoor, claimUnknownPaths);
    }

    /** The router's transport-neutral inference entry, shared by its Jetty handler and any servlet. */
    public InferenceFrontDoor frontDoor() {
        return frontDoor;
    }

    /** Where upstream-request hooks are added ({@code addHook}): they apply to every upstream request of this router. */
    public UpstreamRequests upstreamRequests() {
        return requests;
    }

    /** Where per-request outcome listeners are added ({@code add}). */
    public OutcomeListeners outcomes() {
        return outcomes;
    }

    /** Cache-aware instances by name: the main and the PD prefill policy share one index when both are cache_aware. */
    private final java.util.Map<String, CacheAwarePolicy> cacheAwarePolicies = new java.util.LinkedHashMap<>();

    private RoutingPolicy buildPolicy(String name) {
        switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "cache_aware":
                return cacheAwarePolicies.computeIfAbsent("cache_aware", n -> Policies.cacheAware(config.cacheAwareConfig(),
                        config.routing().minLoadChoices(), java.util.concurrent.ThreadLocalRandom::current, System::currentTimeMillis,
                        config.cacheAware().effectiveMaxIndexBytes()));
            case "sticky":
                return Policies.sticky(buildPolicy(config.session().fallbackPolicy()), "sticky", config.session().idleSecs(),
                        nanoClock);
            default:
                return Policies.create(name, config.routing().minLoadChoices());
        }
    }

    /**
     * Follows a worker's load endpoints (one per dp rank) on the load plane: learned from its
     * {@code /server_info} {@code kv_events} block, or given by an operator when the worker was added
     * through the admin API (engines that advertise nothing).
     */
    /**
     * Feeds the worker's load into the plane from where {@code --load-source} says: its advertised
     * LoadStat endpoints (auto, loadstat), else its {@code /metrics} (auto, metrics) once its engine
     * type is known (discovered or {@code --engine-type}), since that decides the metric names.
     */
    private void subscribe(Worker worker) {
        String mode = config.loadSource().loadSource();
        if (mode.equals("none")) {
            return;
        }
        boolean loadStat = !worker.loadEndpoints().isEmpty() && !mode.equals("metrics");
        if (!loadStat) {
            EngineType engine = EngineType.parse(config.loadSource().engineType());
            engine = engine != null ? engine : worker.engine();
            if (!mode.equals("loadstat") && engine != null) {
                scraper.addWorker(worker.id(), worker.url(), metricNames(engine));
            }
            return;
        }
        if (scraper.isScraping(worker.id())) {
            scraper.removeWorker(worker.id()); // auto: the worker advertised LoadStat after all
        }
        String host = worker.host();
        java.util.List<String> endpoints = new java.util.ArrayList<>();
        for (String advertised : worker.loadEndpoints()) {
            endpoints.add(LoadEndpoints.connectable(advertised, host));
        }
        String topic = worker.kvEvents() == null ? "load" : worker.kvEvents().loadTopic();
        loads.addWorker(worker.id(), endpoints, endpoints.size(), topic);
    }

    private EngineMetricNames metricNames(EngineType engine) {
        EngineMetricNames names = EngineMetricNames.forEngine(engine.label());
        LoadSourceConfig c = config.loadSource();
        if (c.waitingName() != null) {
            names = names.withWaiting(c.waitingName());
        }
        if (c.runningName() != null) {
            names = names.withRunning(c.runningName());
        }
        if (c.kvUsageName() != null) {
            names = names.withKvUsage(c.kvUsageName());
        }
        return names;
    }

    /** The KV-event plane, or null with {@code --cache-index approximate}. */
    public KvEventsPlane kvEvents() {
        return kvEvents;
    }

    private void refreshReadyPool() {
        readyPool.rebuild(registry::fleet, () -> openBreakers, breakers::allowsTraffic);
    }

    public LoadPlane loads() {
        return loads;
    }

    /** Which worker serves which LoRA adapter. */
    public AdapterDirectory adapters() {
        return adapters;
    }

    /** Loads {@code --tokenizer-path} entries: {@code DIR} serves every model ({@code *}), {@code MODEL=DIR} one. */
    static TokenizerRegistry loadTokenizers(RouterConfig config) {
        if (config.tokenization().tokenizerPaths().isEmpty()) {
            return TokenizerRegistry.empty();
        }
        java.util.Map<String, Path> dirs = new java.util.LinkedHashMap<>();
        for (String entry : config.tokenization().tokenizerPaths()) {
            int eq = entry.indexOf('=');
            dirs.put(eq < 0 ? "*" : entry.substring(0, eq), Path.of(eq < 0 ? entry : entry.substring(eq + 1)));
        }
        try {
            // chats are rendered as the fleet's engine preprocesses them; auto = SGLang, whose chat takes input_ids
            return TokenizerRegistry.load(dirs, config.tokenization().cacheBytes(),
                    EngineType.parse(config.loadSource().engineType()),
                    io.kvroute.router.tokenize.SegmentParallelism.ofThreads(config.tokenization().threads()));
        } catch (java.io.IOException | RuntimeException e) {
            throw new io.kvroute.router.config.ConfigException("--tokenizer-path could not be loaded: " + e.getMessage(), e);
        }
    }

    public TokenizerRegistry tokenizers() {
        return tokenizers;
    }

    private static String label(CircuitBreaker.State state) {
        return state.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Graceful drain: {@code /readyz} and new requests answer 503 at once; in-flight requests and
     * streams may finish for up to {@code --shutdown-drain-secs}; the rest are then aborted with a
     * clear error. Returns how many were aborted. Idempotent.
     */
    public int drain() throws InterruptedException {
        beginDrain();
        long deadline = drainStartNanos + config.timeouts().shutdownDrainNanos();
        int aborted = active.awaitThenAbort(deadline, "the router is shutting down and the drain period ("
                + config.timeouts().shutdownDrainSecs() + " s) has ended");
        if (aborted > 0) {
            LOG.warn("drain period over: aborted {} in-flight request(s)", aborted);
        }
        return aborted;
    }

    private volatile long drainStartNanos;

    private synchronized void beginDrain() {
        if (!active.draining()) {
            drainStartNanos = nanoClock.getAsLong();
            active.beginDrain();
        }
    }

    /**
     * Jetty's graceful-shutdown hook, called by {@code Server.stop()} before connectors close when
     * the router is mounted in a host server: starts the drain and completes once no request is in
     * flight (the server's stop timeout bounds the wait; {@link #doStop} aborts leftovers).
     */
    @Override
    public java.util.concurrent.CompletableFuture<Void> shutdown() {
        beginDrain();
        return active.drained();
    }

    @Override
    public boolean isShutdown() {
        return active.draining();
    }

    /** Client requests being served now. */
    public int activeRequests() {
        return active.size();
    }

    public boolean draining() {
        return active.draining();
    }

    public Breakers breakers() {
        return breakers;
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        // As Jetty's ProxyHandler does once its client has started (the client installs these defaults
        // in its own start): no transparent content decoding, so no Accept-Encoding is added and bytes
        // are relayed as the worker sent them, and no protocol handlers, so a worker's 401 goes back as
        // an answer instead of through authentication logic.
        client.getContentDecoderFactories().clear();
        client.getProtocolHandlers().clear();
        loads.start();
        scraper.start();
        if (kvEvents != null) {
            kvEvents.start();
        }
        for (Worker worker : registry.fleet().all()) {
            subscribe(worker);
        }
        health.start();
        if (discovery != null) {
            discovery.start();
        }
    }

    @Override
    protected void doStop() throws Exception {
        if (discovery != null) {
            discovery.close(); // the fleet stays as it is while the drain runs
        }
        drain();
        health.close();
        scraper.close();
        loads.close();
        if (kvEvents != null) {
            kvEvents.close();
        }
        tokenizers.close();
        tracer.close();
        frontDoor.close();
        super.doStop();
    }

    public RouterConfig config() {
        return config;
    }

    public WorkerRegistry workers() {
        return registry;
    }

    public RouterMetrics metrics() {
        return metrics;
    }

    public InFlightCounters inFlight() {
        return inFlight;
    }

    public HealthChecker health() {
        return health;
    }

    /** Kubernetes discovery, or null without {@code --service-discovery}. */
    public KubernetesDiscovery discovery() {
        return discovery;
    }

    /** The policy choosing PD prefill workers (the same instance as the main policy unless {@code --prefill-policy}). */
    RoutingPolicy prefillPolicy() {
        return context.prefillPolicy();
    }

    /** The main policy ({@code --policy}). */
    RoutingPolicy policy() {
        return policy;
    }
}
