package io.kvroute.router.plugin;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.LoadSourceConfig;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.discovery.KubernetesDiscovery;
import io.kvroute.router.dispatch.ApiKind;
import io.kvroute.router.dispatch.DispatchDeps;
import io.kvroute.router.dispatch.MetricsOutcomes;
import io.kvroute.router.dispatch.OutcomeListeners;
import io.kvroute.router.dispatch.PdRouting;
import io.kvroute.router.dispatch.PlainRouting;
import io.kvroute.router.dispatch.RetryRule;
import io.kvroute.router.dispatch.UpstreamRequests;
import io.kvroute.router.http.JettyTransport;
import io.kvroute.router.http.RouterContext;
import io.kvroute.router.ingress.ActiveRequests;
import io.kvroute.router.ingress.InferenceFrontDoor;
import io.kvroute.router.kvevents.KvEventsPlane;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.load.LoadPlaneConfig;
import io.kvroute.router.load.MetricsScraper;
import io.kvroute.router.lora.AdapterDirectory;
import io.kvroute.router.lora.LoraRouting;
import io.kvroute.router.lora.ModelListRefresh;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.tokenize.SegmentParallelism;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.CircuitBreaker;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.HealthChecker;
import io.kvroute.router.worker.InFlightCounters;
import io.kvroute.router.worker.KvEventsTemplates;
import io.kvroute.router.worker.ReadyPool;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: the one place the router's object graph is wired, read top to bottom in the
 * constructor's named steps (transport, workers and health, policies and tokenizers, the load plane,
 * LoRA, the front door, the KV-event plane, metrics, fleet listeners, the seed fleet and discovery).
 * Each component is built once and handed only what it uses. {@link KvRouter} owns the lifecycle: it
 * adds {@link #upstreamClient}, {@link #healthScheduler} and {@link #scrapeClient} as Jetty beans and
 * starts and stops the rest, reading the fields below.
 *
 * <p>Built on one thread; afterwards the fields are final and every component is thread-safe. The
 * breaker and fleet listeners run on whichever thread reports the change.
 */
final class RouterAssembly {

    /** Logged under KvRouter's name, the category operators configure for the router's lifecycle. */
    private static final Logger LOG = LoggerFactory.getLogger(KvRouter.class);
    /** Upstream connections per worker: bounds the sockets one busy worker can take from the client. */
    private static final int MAX_CONNECTIONS_PER_WORKER = 4096;
    /** Requests waiting for a connection to one worker before the client refuses more. */
    private static final int MAX_QUEUED_PER_WORKER = 65536;

    final RouterConfig config;
    /** The router's one nanosecond clock: every component that measures or schedules by time reads it. */
    final LongSupplier nanoClock;
    final RequestTracer tracer;
    final RouterMetrics metrics = new RouterMetrics();
    final WorkerRegistry registry = new WorkerRegistry();
    final InFlightCounters inFlight = new InFlightCounters();
    final ActiveRequests active;
    /** What requests may be routed to, rebuilt on fleet and breaker changes instead of scanned per request. */
    final ReadyPool readyPool;
    /** Workers whose breaker is open, for {@link #readyPool} rebuilds. */
    private final Set<String> openBreakers = ConcurrentHashMap.newKeySet();

    final HttpClient upstreamClient;
    /** The router's scheduler for its periodic work (health rounds). */
    final ScheduledExecutorScheduler healthScheduler;
    /** A client of its own for /metrics scrapes: one connection per worker, never competing with traffic. */
    final HttpClient scrapeClient;

    final HealthChecker health;
    final Breakers breakers;
    final RouterPolicies policies;
    final TokenizerRegistry tokenizers;
    final LoadPlane loads;
    final MetricsScraper scraper;
    final LoadFeeds loadFeeds;
    /** Which worker serves which LoRA adapter (model lists, /metrics, the router's own dispatches). */
    final AdapterDirectory adapters;
    final LoraRouting lora;
    /** Upstream-request hooks of every dispatch (trace context first). */
    final UpstreamRequests requests;
    /** Per-request outcome listeners (metrics first). */
    final OutcomeListeners outcomes;
    final InferenceFrontDoor frontDoor;
    /** The collaborators of the Jetty handler and its admin routes. */
    final RouterContext handlerContext;
    /** Decides which workers' KV events feed the exact index (a no-op without the plane). */
    final KvEventsWiring kvWiring;
    /** The engines' KV events ({@code --cache-index exact|auto}), or null with {@code approximate}. */
    final KvEventsPlane kvEvents;
    /** Kubernetes pod discovery, or null without {@code --service-discovery}. */
    final KubernetesDiscovery discovery;

    /**
     * @param kubernetes the client {@code --service-discovery} uses, or null for fabric8's default resolution
     * @param tracer the request tracer (closed by the router when it stops)
     */
    /**
     * @param wallClock the date the chat templates' {@code strftime_now} formats (the system clock in production)
     */
    RouterAssembly(RouterConfig config, KubernetesClient kubernetes, RequestTracer tracer, LongSupplier nanoClock,
            InstantSource wallClock) {
        this.config = config;
        this.nanoClock = nanoClock;
        this.tracer = tracer;
        this.active = new ActiveRequests(nanoClock);
        this.readyPool = new ReadyPool(config.routing().modelIds());

        // transport: the Jetty clients and scheduler KvRouter starts and stops as beans
        this.upstreamClient = upstreamClient(config);
        this.healthScheduler = new ScheduledExecutorScheduler("kvroute-health", true);
        this.scrapeClient = scrapeClient(config.loadSource());

        // workers and health
        this.health = new HealthChecker(registry, upstreamClient, config.health(), w -> { },
                EngineType.parse(config.loadSource().engineType()), healthScheduler);
        this.breakers = new Breakers(config.breaker(), nanoClock, this::onBreakerTransition);

        // policies and tokenizers
        this.policies = RouterPolicies.build(config, nanoClock);
        this.tokenizers = loadTokenizers(config, wallClock);

        // the load plane, fed by LoadStat streams or /metrics scrapes
        this.loads = new LoadPlane(LoadPlaneConfig.defaults()
                .withFreshnessWindow(Duration.ofNanos(config.loadSource().freshnessNanos()))
                .withMetricsStaleness(Duration.ofMillis(config.loadSource().stalenessMs())),
                nanoClock, metrics.registry());
        this.scraper = new MetricsScraper(loads, scrapeClient, config.loadSource().scrapeIntervalMs(),
                config.loadSource().scrapeTimeoutMs(), LoadSourceConfig.MAX_SCRAPE_BACKOFF_MS, nanoClock,
                metrics.registry());
        this.loadFeeds = new LoadFeeds(config.loadSource(), loads, scraper);

        // LoRA adapters: model lists and /metrics feed one directory; placement and dispatch read its snapshot
        this.adapters = new AdapterDirectory();
        wireAdapterDirectory();
        this.lora = new LoraRouting(adapters, config.lora(), JettyTransport.adapterLoader(upstreamClient),
                metrics.registry(), nanoClock);

        // the front door over the dispatch core, and the Jetty handler's collaborators
        this.requests = new UpstreamRequests(config.timeouts().requestMillis(), config.timeouts().streamIdleMillis());
        // W3C trace context of the call's own span on every upstream request (no-op when tracing is off)
        requests.addHook((target, headers) -> target.span().inject(headers::put));
        this.outcomes = new OutcomeListeners(new MetricsOutcomes(metrics));
        this.handlerContext = new RouterContext(config, registry, inFlight, breakers, health, metrics, loads, tracer);
        this.frontDoor = new InferenceFrontDoor(config, dispatchDeps(),
                new PlainRouting(policies.main(), policies.session()),
                new PdRouting(policies.prefill(), policies.prefillSession(), policies.decode(),
                        () -> ThreadLocalRandom.current().nextLong()),
                active, tokenizers, readyPool, registry, nanoClock);

        // the KV-event plane: which workers' events feed the exact index
        this.kvWiring = KvEventsWiring.create(config, metrics.registry(), policies.cacheAware(), nanoClock);
        this.kvEvents = kvWiring.plane();
        // vllm:cache_config_info's block size confirms (or refuses) a worker's KV-event template
        scraper.onBlockSize((workerId, blockSize) -> registry.get(workerId)
                .ifPresent(w -> kvWiring.engineBlockSize(w, blockSize)));

        bindRouterMetrics();
        registry.addListener(change -> refreshReadyPool());
        registry.addListener(this::onFleetChange);

        // the fleet: the flags' workers now, Kubernetes pods once started
        KvEventsTemplates templates = config.kvEvents().templates();
        seedWorkers(templates);
        this.discovery = !config.serviceDiscovery().enabled() ? null : KubernetesDiscovery.create(kubernetes,
                config.serviceDiscovery(), templates, config.kvEvents().annotation(), registry, inFlight::get,
                health::probeAll, config.timeouts().shutdownDrainNanos(), metrics.registry(), nanoClock);
    }

    /**
     * The upstream client, configured as a gateway: no cookie store, so a worker's Set-Cookie never rides
     * along on another client's request (it also spares a URI parse per request); redirects not followed;
     * no User-Agent of its own. {@code KvRouter.doStart} clears what the client installs when it starts.
     */
    private static HttpClient upstreamClient(RouterConfig config) {
        QueuedThreadPool clientThreads = new QueuedThreadPool();
        clientThreads.setName("kvroute-upstream");
        clientThreads.setDaemon(true);
        HttpClient client = new HttpClient();
        client.setExecutor(clientThreads);
        client.setConnectTimeout(config.timeouts().connectMillis());
        client.setMaxConnectionsPerDestination(MAX_CONNECTIONS_PER_WORKER);
        client.setMaxRequestsQueuedPerDestination(MAX_QUEUED_PER_WORKER);
        client.setFollowRedirects(false);
        client.setUserAgentField(null);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        return client;
    }

    private static HttpClient scrapeClient(LoadSourceConfig config) {
        return MetricsScraper.newHttpClient(config.scrapeTimeoutMs());
    }

    /** Model lists (health rounds) and /metrics feed the adapter directory; cache-aware placement reads it. */
    private void wireAdapterDirectory() {
        ModelListRefresh modelLists = new ModelListRefresh(config.lora().modelsRefreshNanos(), nanoClock);
        health.onModelCards((id, cards) -> adapters.updateCards(id, cards.base(), cards.adapters()),
                id -> modelLists.due(id, !adapters.current().of(id).listed().isEmpty()
                        || adapters.current().of(id).maxLoras() > 0));
        scraper.onLoraReading(adapters::updateLoad);
        for (CacheAwarePolicy cacheAware : policies.cacheAware()) {
            cacheAware.useAdapterPlacement(adapters::current, config.lora().affinityWeight());
        }
    }

    /** What plain and PD dispatch share: the fleet's counters, meters, the upstream and its clock, the hooks. */
    private DispatchDeps dispatchDeps() {
        return new DispatchDeps(inFlight, breakers, metrics, loads, policies::recordDispatch, active,
                JettyTransport.upstream(upstreamClient, metrics, nanoClock), requests,
                JettyTransport.dispatchClock(upstreamClient, nanoClock),
                RetryRule.from(config.retry(), config.pd().busyRetryNanos(),
                        () -> ThreadLocalRandom.current().nextDouble()),
                outcomes, lora);
    }

    /** Meters that read the router's state: prefix indexes, tokenizer caches, endpoints at zero, drain and activity. */
    private void bindRouterMetrics() {
        for (CacheAwarePolicy cacheAware : policies.cacheAware()) {
            cacheAware.prefixIndexes().forEach((mode, index) -> metrics.bindPrefixIndex(cacheAware.name(), mode, index));
        }
        tokenizers.chatPrefixCaches().forEach(metrics::bindChatPrefixCache);
        tokenizers.chatCacheDeclines().forEach(metrics::chatCacheDeclined);
        tokenizers.textOnlyModels().forEach(metrics::templateTextOnly);
        metrics.registerEndpointSeriesAtZero(Arrays.stream(ApiKind.values()).map(kind -> kind.path).toList());
        metrics.bindDraining(active::draining);
        metrics.bindActive(active::size);
    }

    /** A breaker changed state: log and count it, and republish the ready pool (an open breaker takes its worker out). */
    private void onBreakerTransition(String workerId, CircuitBreaker.Transition transition) {
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
    }

    private void refreshReadyPool() {
        readyPool.rebuild(registry::fleet, () -> openBreakers, breakers::allowsTraffic);
    }

    /** A worker joined, changed or left: its meters, load feed, KV-event subscription and per-worker state follow. */
    private void onFleetChange(WorkerRegistry.Change change) {
        Worker worker = change.worker();
        String id = worker.id();
        if (change.kind() == WorkerRegistry.ChangeKind.ADDED) {
            metrics.bindInFlight(worker.url(), inFlight.counter(id));
            metrics.bindHealthy(worker.url(), () -> registry.fleet().isHealthy(id));
            metrics.bindBreakerState(worker.url(), () -> breakers.state(id).ordinal());
            metrics.registerWorkerSeriesAtZero(worker.url());
            for (CacheAwarePolicy cacheAware : policies.cacheAware()) {
                cacheAware.prefixIndexes().forEach((mode, index) ->
                        metrics.bindPrefixOwned(cacheAware.name(), mode, worker.url(), id, index));
            }
            loadFeeds.subscribe(worker);
            kvWiring.subscribe(worker);
        } else if (change.kind() == WorkerRegistry.ChangeKind.UPDATED) {
            loadFeeds.subscribe(worker);
            kvWiring.subscribe(worker);
        } else if (change.kind() == WorkerRegistry.ChangeKind.REMOVED) {
            metrics.forgetWorker(worker.url());
            loadFeeds.forget(id);
            kvWiring.forget(id);
            breakers.forget(id);
            adapters.removeWorker(id);
            for (CacheAwarePolicy cacheAware : policies.cacheAware()) {
                cacheAware.removeWorker(id);
            }
        }
    }

    /**
     * The workers the flags name: {@code --worker-urls}, {@code --prefill URL[=BOOTSTRAP_PORT]} and
     * {@code --decode}, with the operator-stated KV-event endpoints (vLLM has no /server_info); an advert
     * from /server_info replaces them.
     */
    private void seedWorkers(KvEventsTemplates templates) {
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
    }

    /** Loads {@code --tokenizer-path} entries: {@code DIR} serves every model ({@code *}), {@code MODEL=DIR} one. */
    static TokenizerRegistry loadTokenizers(RouterConfig config, InstantSource wallClock) {
        if (config.tokenization().tokenizerPaths().isEmpty()) {
            return TokenizerRegistry.empty();
        }
        Map<String, Path> dirs = new LinkedHashMap<>();
        for (String entry : config.tokenization().tokenizerPaths()) {
            int eq = entry.indexOf('=');
            dirs.put(eq < 0 ? "*" : entry.substring(0, eq), Path.of(eq < 0 ? entry : entry.substring(eq + 1)));
        }
        try {
            // chats are rendered as the fleet's engine preprocesses them; auto = SGLang, whose chat takes input_ids
            return TokenizerRegistry.load(dirs, config.tokenization().cacheBytes(),
                    EngineType.parse(config.loadSource().engineType()),
                    SegmentParallelism.ofThreads(config.tokenization().threads()), wallClock);
        } catch (IOException | RuntimeException e) {
            throw new ConfigException("--tokenizer-path could not be loaded: " + e.getMessage(), e);
        }
    }

    private static String label(CircuitBreaker.State state) {
        return state.name().toLowerCase(Locale.ROOT);
    }
}
