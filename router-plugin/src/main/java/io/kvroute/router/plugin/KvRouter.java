package io.kvroute.router.plugin;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.http.RouterHandler;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.Policies;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.worker.HealthChecker;
import io.kvroute.router.worker.InFlightCounters;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import java.nio.file.Path;
import java.util.Objects;
import org.eclipse.jetty.client.HttpClient;
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
public final class KvRouter extends ContainerLifeCycle {

    private final RouterConfig config;
    private final WorkerRegistry registry = new WorkerRegistry();
    private final InFlightCounters inFlight = new InFlightCounters();
    private final RouterMetrics metrics = new RouterMetrics();
    private final HttpClient client;
    private final RoutingPolicy policy;
    private final HealthChecker health;

    private KvRouter(RouterConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        QueuedThreadPool clientThreads = new QueuedThreadPool();
        clientThreads.setName("kvroute-upstream");
        clientThreads.setDaemon(true);
        this.client = new HttpClient();
        client.setExecutor(clientThreads);
        client.setConnectTimeout((long) (config.connectTimeoutSecs() * 1000));
        client.setMaxConnectionsPerDestination(4096);
        client.setMaxRequestsQueuedPerDestination(65536);
        client.setFollowRedirects(false);
        client.setUserAgentField(null);
        addBean(client);
        this.policy = Policies.create(config.policy(), config.minLoadChoices());
        this.health = new HealthChecker(registry, client, (long) (config.healthCheckIntervalSecs() * 1000),
                (long) (config.healthCheckTimeoutSecs() * 1000), config.healthFailureThreshold(),
                config.healthSuccessThreshold(), w -> { });
        registry.addListener(change -> {
            if (change.kind() == WorkerRegistry.ChangeKind.ADDED) {
                String id = change.worker().id();
                metrics.bindInFlight(id, inFlight.counter(id));
                metrics.bindHealthy(id, () -> registry.fleet().isHealthy(id));
            }
        });
        for (String url : config.workerUrls()) {
            registry.add(Worker.regular(url));
        }
    }

    /** A router for {@code config}; not started. */
    public static KvRouter create(RouterConfig config) {
        return new KvRouter(config);
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
        server.setHandler(sequence);
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
        return new RouterHandler(config, registry, inFlight, policy, client, metrics, claimUnknownPaths);
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        health.start();
    }

    @Override
    protected void doStop() throws Exception {
        health.close();
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
}
