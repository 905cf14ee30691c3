package io.kvroute.router.discovery;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kvroute.router.config.ServiceDiscoveryConfig;
import io.kvroute.router.worker.KvEventsTemplates;
import io.kvroute.router.worker.WorkerRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fabric8 adapter: one Pod informer (list, then watch; fabric8 re-watches after a dropped
 * connection and re-lists when its resource version is too old) on the discovery namespace feeds
 * {@link FleetReconciler}, whose actions it applies to the {@link WorkerRegistry}.
 *
 * <p>Threading: informer callbacks only enqueue onto one serial executor, which owns the
 * reconciler, plans and applies (the gRPC synchronization-context pattern); no lock is held
 * anywhere here. The same executor ticks every {@code tickMillis} to finish drains (a drained
 * worker is removed once its in-flight count reaches zero) and to stamp the sync time.
 *
 * <p>When the API server is unreachable, nothing is removed: the informer keeps its last view and
 * retries, the fleet keeps serving, and {@code kvroute_discovery_last_sync_age_seconds} grows.
 * Credentials and the API server come from fabric8's usual resolution (in-cluster service account,
 * else {@code KUBECONFIG}/{@code ~/.kube/config}); only get/list/watch on pods is needed.
 */
public final class KubernetesDiscovery implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesDiscovery.class);
    /** Informer resync: replays the cache to the reconciler (idempotent), a safety net for missed plans. */
    static final long RESYNC_MILLIS = 60_000;
    static final long DEFAULT_TICK_MILLIS = 500;

    private final KubernetesClient client;
    private final boolean ownsClient;
    private final String namespace;
    private final WorkerRegistry registry;
    private final ToIntFunction<String> inFlight;
    private final Runnable onAdded;
    private final LongSupplier nanoClock;
    private final long tickMillis;
    private final FleetReconciler reconciler;
    private final ScheduledExecutorService serial = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "kvroute-discovery");
        thread.setDaemon(true);
        return thread;
    });
    private final long startNanos;
    private volatile long lastSyncNanos = Long.MIN_VALUE;
    private volatile int discoveredWorkers;
    private volatile SharedIndexInformer<Pod> informer;

    /**
     * @param client the API client, or null for fabric8's default resolution (then owned and closed here)
     * @param inFlight router-local in-flight requests per worker id
     * @param onAdded run after workers were added (e.g. an immediate health probe)
     * @param drainTimeoutNanos longest a drained worker waits for its in-flight requests
     */
    public KubernetesDiscovery(KubernetesClient client, ServiceDiscoveryConfig config, WorkerRegistry registry,
            ToIntFunction<String> inFlight, Runnable onAdded, long drainTimeoutNanos, LongSupplier nanoClock,
            MeterRegistry meters, long tickMillis) {
        this(client, new DiscoveryRules(config), config, registry, inFlight, onAdded, drainTimeoutNanos, nanoClock, meters,
                tickMillis);
    }

    /** As above, with the rules (and so the KV-event templates and annotation) given. */
    public KubernetesDiscovery(KubernetesClient client, DiscoveryRules rules, ServiceDiscoveryConfig config,
            WorkerRegistry registry, ToIntFunction<String> inFlight, Runnable onAdded, long drainTimeoutNanos,
            LongSupplier nanoClock, MeterRegistry meters, long tickMillis) {
        this.ownsClient = client == null;
        this.client = client == null ? new KubernetesClientBuilder().build() : client;
        this.namespace = config.namespace() != null ? config.namespace()
                : this.client.getNamespace() != null ? this.client.getNamespace() : "default";
        this.registry = Objects.requireNonNull(registry, "registry");
        this.inFlight = Objects.requireNonNull(inFlight, "inFlight");
        this.onAdded = Objects.requireNonNull(onAdded, "onAdded");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.tickMillis = tickMillis;
        this.reconciler = new FleetReconciler(Objects.requireNonNull(rules, "rules"), drainTimeoutNanos);
        this.startNanos = nanoClock.getAsLong();
        Gauge.builder("kvroute.discovery.last.sync.age", this, d -> d.lastSyncAgeSeconds()).baseUnit("seconds")
                .description("Seconds since the pod informer last proved it is in sync with the API server")
                .strongReference(true).register(meters);
        Gauge.builder("kvroute.discovery.watching", this, d -> d.watching() ? 1 : 0)
                .description("1 while the pod watch is connected").strongReference(true).register(meters);
        Gauge.builder("kvroute.discovery.workers", this, d -> d.discoveredWorkers)
                .description("Workers the discovered pods ask for").strongReference(true).register(meters);
    }

    public static KubernetesDiscovery create(KubernetesClient client, ServiceDiscoveryConfig config,
            WorkerRegistry registry, ToIntFunction<String> inFlight, Runnable onAdded, long drainTimeoutNanos,
            MeterRegistry meters) {
        return create(client, config, KvEventsTemplates.NONE, KvEventsTemplates.DEFAULT_ANNOTATION, registry, inFlight,
                onAdded, drainTimeoutNanos, meters);
    }

    /**
     * @param templates the fleet's default KV-event template ({@code --kv-events-template})
     * @param kvEventsAnnotation the pod annotation holding a pod's own template ({@code --kv-events-annotation})
     */
    public static KubernetesDiscovery create(KubernetesClient client, ServiceDiscoveryConfig config,
            KvEventsTemplates templates, String kvEventsAnnotation, WorkerRegistry registry,
            ToIntFunction<String> inFlight, Runnable onAdded, long drainTimeoutNanos, MeterRegistry meters) {
        return create(client, config, templates, kvEventsAnnotation, registry, inFlight, onAdded, drainTimeoutNanos,
                meters, System::nanoTime);
    }

    /** As above, with removed pods' drain deadlines on {@code nanoClock} (the router's clock). */
    public static KubernetesDiscovery create(KubernetesClient client, ServiceDiscoveryConfig config,
            KvEventsTemplates templates, String kvEventsAnnotation, WorkerRegistry registry,
            ToIntFunction<String> inFlight, Runnable onAdded, long drainTimeoutNanos, MeterRegistry meters,
            LongSupplier nanoClock) {
        return new KubernetesDiscovery(client, new DiscoveryRules(config, templates, kvEventsAnnotation), config,
                registry, inFlight, onAdded, drainTimeoutNanos, nanoClock, meters, DEFAULT_TICK_MILLIS);
    }

    /** Starts the informer without waiting for the API server: an unreachable server delays workers, not startup. */
    public void start() {
        SharedIndexInformer<Pod> podInformer = client.pods().inNamespace(namespace).runnableInformer(RESYNC_MILLIS);
        podInformer.exceptionHandler((started, error) -> {
            LOG.warn("pod informer for namespace {}: {}; retrying", namespace, error.toString());
            return true;
        });
        podInformer.addEventHandler(new ResourceEventHandler<Pod>() {
            @Override
            public void onAdd(Pod pod) {
                submit(() -> reconciler.upsert(PodFactsReader.read(pod)));
            }

            @Override
            public void onUpdate(Pod oldPod, Pod newPod) {
                submit(() -> reconciler.upsert(PodFactsReader.read(newPod)));
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                submit(() -> reconciler.delete(PodFactsReader.key(pod)));
            }
        });
        informer = podInformer;
        podInformer.start().whenComplete((ok, error) -> {
            if (error == null) {
                LOG.info("pod informer for namespace {} synced", namespace);
                lastSyncNanos = nanoClock.getAsLong();
            }
        });
        serial.scheduleWithFixedDelay(this::tick, tickMillis, tickMillis, TimeUnit.MILLISECONDS);
        LOG.info("service discovery watching pods in namespace {}", namespace);
    }

    public String namespace() {
        return namespace;
    }

    /** True while the informer's watch connection is open. */
    public boolean watching() {
        SharedIndexInformer<Pod> current = informer;
        return current != null && current.isWatching();
    }

    /** Seconds since the informer last proved it was in sync (since start while it never has). */
    public double lastSyncAgeSeconds() {
        long last = lastSyncNanos;
        return (nanoClock.getAsLong() - (last == Long.MIN_VALUE ? startNanos : last)) / 1e9;
    }

    private void submit(Runnable event) {
        try {
            serial.execute(() -> {
                event.run();
                lastSyncNanos = nanoClock.getAsLong(); // an event proves the watch is live
                reconcile();
            });
        } catch (RejectedExecutionException closed) {
            // shutting down: the fleet is being torn down anyway
        }
    }

    private void tick() {
        if (watching()) {
            lastSyncNanos = nanoClock.getAsLong();
        }
        reconcile();
    }

    private void reconcile() {
        try {
            List<ReconcileAction> actions = reconciler.plan(registry.fleet(), inFlight, nanoClock.getAsLong());
            discoveredWorkers = reconciler.desired().size();
            boolean added = false;
            for (ReconcileAction action : actions) {
                LOG.info("discovery: {}", action);
                action.applyTo(registry);
                added |= action instanceof ReconcileAction.Add;
            }
            if (added) {
                onAdded.run();
            }
        } catch (RuntimeException e) {
            LOG.error("discovery reconcile failed; the next event or tick retries", e);
        }
    }

    @Override
    public void close() {
        SharedIndexInformer<Pod> current = informer;
        if (current != null) {
            current.close();
        }
        serial.shutdownNow();
        if (ownsClient) {
            client.close();
        }
    }
}
