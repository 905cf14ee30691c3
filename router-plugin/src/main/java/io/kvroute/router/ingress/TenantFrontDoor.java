package io.kvroute.router.ingress;

import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.TenantsConfig;
import io.kvroute.router.dispatch.Abortable;
import io.kvroute.router.dispatch.ClientSink;
import io.kvroute.router.dispatch.EnginePriority;
import io.kvroute.router.dispatch.WorkerRoom;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.metrics.TenantMetrics;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.tenant.PriorityClass;
import io.kvroute.router.tenant.QosGate;
import io.kvroute.router.tenant.QosTicket;
import io.kvroute.router.tenant.RateLimiter;
import io.kvroute.router.tenant.TenantDirectory;
import io.kvroute.router.tenant.TenantDirectoryWatcher;
import io.kvroute.router.tenant.TenantSpec;
import io.kvroute.router.tenant.TenantsFile;
import io.kvroute.router.worker.ReadyPool;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.nio.file.Path;
import java.util.AbstractList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The edge of the tenant and QoS layer ({@code --tenants-file}): who a request is for and its class
 * ({@link #identify}, before the body is read), then after ingress tokenization its rate limits and
 * its place in the router-side queue ({@link #admit}), which starts the dispatch when the request is
 * admitted. Absent without a tenants file: the front door then runs today's path unchanged.
 *
 * <p>One single-threaded daemon scheduler ticks the queue ({@value #TICK_MILLIS} ms: timeouts,
 * starvation promotion, engine saturation clearing) and polls the tenants file's modification time
 * ({@value #RELOAD_POLL_MILLIS} ms). Thread-safe.
 */
final class TenantFrontDoor {

    private static final Logger LOG = LoggerFactory.getLogger(TenantFrontDoor.class);
    static final long TICK_MILLIS = 50;
    static final long RELOAD_POLL_MILLIS = 1_000;
    private static final Pattern TENANT_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /** Who a request is for: the directory it was resolved against, its tenant and its effective class. */
    record Identity(TenantDirectory directory, TenantSpec tenant, PriorityClass priority) {}

    /** Answers a refused request (an OpenAI error with the exception's status and headers). */
    interface Refusal {
        void refuse(ClientSink sink, ApiException error);
    }

    private final TenantDirectoryWatcher watcher;
    private final String trustedHeader;
    private final RateLimiter limiter;
    private final QosGate gate;
    private final TenantMetrics metrics;
    private final ScheduledExecutorService scheduler;
    /** The router's clock (rate limits, queue waits). */
    private final LongSupplier nanoClock;
    /** {@code --qos-engine-priority}: the class goes to the engines as their priority field. */
    private final boolean enginePriority;
    /** Workers that refused the engine priority field (vLLM without priority scheduling); see {@link EnginePriority}. */
    private final Set<String> priorityRefusals = ConcurrentHashMap.newKeySet();
    /** {@code --qos-capacity-scope worker}: each request holds its tokens on one worker of its pool. */
    private final boolean perWorker;

    private TenantFrontDoor(TenantDirectoryWatcher watcher, String trustedHeader, QosGate gate, TenantMetrics metrics,
            LongSupplier nanoClock, boolean enginePriority, boolean perWorker) {
        this.perWorker = perWorker;
        this.nanoClock = nanoClock;
        this.enginePriority = enginePriority;
        if (enginePriority) {
            metrics.bindEnginePriorityRefusals(priorityRefusals::size);
        }
        this.watcher = watcher;
        this.trustedHeader = trustedHeader;
        this.limiter = new RateLimiter(nanoClock);
        this.gate = gate;
        this.metrics = metrics;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvroute-qos");
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(this::poll, RELOAD_POLL_MILLIS, RELOAD_POLL_MILLIS, TimeUnit.MILLISECONDS);
        if (gate != null) {
            scheduler.scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * The tenant layer for {@code config}, or null when no tenants file is configured.
     *
     * @param apiKey {@code --api-key}, or null
     * @param policy the main policy: when cache-aware with a worker queue limit, it tells when the engines saturate
     * @param readyPool and {@code loads}: the fleet the router-side queue admits onto
     */
    static TenantFrontDoor create(TenantsConfig config, String apiKey, RouterMetrics routerMetrics, RoutingPolicy policy,
            ReadyPool readyPool, LoadPlane loads, LongSupplier nanoClock) {
        if (!config.enabled()) {
            return null;
        }
        TenantDirectoryWatcher watcher;
        try {
            watcher = TenantDirectoryWatcher.open(Path.of(config.tenantsFile()), apiKey);
        } catch (TenantsFile.TenantsFileException e) {
            throw new ConfigException("--tenants-file: " + e.getMessage(), e);
        }
        TenantMetrics metrics = new TenantMetrics(routerMetrics.registry(), config.maxTenantLabels());
        metrics.bindReloads(watcher::reloads, watcher::failedReloads);
        metrics.registerSeriesAtZero();
        QosGate gate = null;
        if (config.queueEnabled()) {
            CacheAwarePolicy cacheAware = policy instanceof CacheAwarePolicy c ? c : null;
            boolean gateConfigured = cacheAware != null && cacheAware.config().workerQueueLimit() > 0;
            gate = new QosGate(watcher::current, config.workerCapacityTokens(), config.localitySlackTokens(),
                    config.fairnessMode(), config.perWorkerCapacity() ? config.holderWaitMillis() * 1_000_000L : 0,
                    new QosGate.Fleet() {
                        @Override
                        public int usableWorkers() {
                            ReadyPool.Snapshot pool = readyPool.current();
                            return pool.eligible(WorkerRole.REGULAR, null).size()
                                    + pool.eligible(WorkerRole.DECODE, null).size();
                        }

                        @Override
                        public boolean engineSaturated() {
                            return gateConfigured && cacheAware.fleetSaturated(loads.snapshot(),
                                    readyPool.current().eligible(WorkerRole.REGULAR, null));
                        }
                    }, nanoClock, metrics);
            metrics.bindQueueDepth(gate);
            metrics.bindSlack(config.localitySlackTokens());
        }
        LOG.info("tenants: {} from {}; router-side queue {}", watcher.current().tenants().size(), config.tenantsFile(),
                gate == null ? "off" : config.workerCapacityTokens() + " tokens per worker, counted "
                        + (config.perWorkerCapacity() ? "per worker" : "over the fleet"));
        return new TenantFrontDoor(watcher, config.trustedTenantHeader(), gate, metrics, nanoClock, config.enginePriority(),
                config.perWorkerCapacity());
    }

    /** The engine priority a request of {@code identity} carries, or null (flag off, or the default class). */
    EnginePriority enginePriority(Identity identity) {
        int levels = identity.priority().levelsAboveDefault();
        return enginePriority && levels != 0 ? new EnginePriority(levels, priorityRefusals) : null;
    }

    /** The tenant and class of a request from its headers; 401 for an unknown or missing key, 400 for a bad tenant header. */
    Identity identify(Function<String, String> headers) throws ApiException {
        TenantDirectory dir = watcher.current();
        TenantSpec tenant = null;
        if (trustedHeader != null) {
            String name = headers.apply(trustedHeader);
            if (name != null && !name.isBlank()) {
                name = name.trim();
                if (!TENANT_NAME.matcher(name).matches()) {
                    throw new ApiException(400, "header " + trustedHeader + " must be 1..64 characters of A-Z a-z 0-9 . _ -");
                }
                tenant = dir.byName(name);
                if (tenant == null) {
                    tenant = TenantSpec.plain(name);
                }
            }
        }
        if (tenant == null) {
            tenant = dir.byKey(bearer(headers.apply("Authorization")));
            if (tenant == null) {
                throw new ApiException(401, "authentication_error", "a valid API key is required (Authorization: Bearer ...)")
                        .header("WWW-Authenticate", "Bearer");
            }
        }
        return new Identity(dir, tenant, PriorityClass.effective(headers.apply(PriorityClass.HEADER), tenant.maxClass()));
    }

    /**
     * Rate limits, then the router-side queue; {@code start} runs (on this or a later thread) once the
     * request is admitted and returns its dispatch. Refusals go through {@code refusal}.
     *
     * @param tokenBudget the request's {@code max_tokens} (or equivalent), negative when absent
     * @param cachedTokensOn worker id to the prompt tokens cached there (locality), or null
     * @param workers the workers that hold the request's tokens while it runs (its plain pool, or its decode pool
     *     under PD), read afresh whenever the queue looks
     * @param start starts the dispatch on the sink, with the request's {@link WorkerRoom} (null: route over the whole
     *     pool)
     */
    void admit(Identity id, long inputTokens, long tokenBudget, ToLongFunction<String> cachedTokensOn,
            Supplier<List<Worker>> workers, ClientSink sink, BiFunction<ClientSink, WorkerRoom, Abortable> start,
            Refusal refusal) {
        long outputReserve = tokenBudget > 0 ? tokenBudget : id.directory().defaultOutputTokens();
        long reserved = Math.max(0, inputTokens) + outputReserve; // tokens in flight (capacity), unweighted
        // the limit counts weighted tokens: an upper bound now (nothing known cached), the weighted actual at the end
        long rateReserved = RateLimiter.reservation(inputTokens, outputReserve);
        TenantSpec tenant = id.tenant();
        RateLimiter.Verdict verdict = limiter.reserve(tenant, rateReserved);
        if (!verdict.allowed()) {
            metrics.shed(tenant.name(), id.priority(), verdict.reason());
            refusal.refuse(sink, new ApiException(429, "rate_limit_exceeded", "tenant '" + tenant.name()
                    + "' is over its " + (verdict.reason().equals("rate_limit_requests") ? "requests" : "tokens")
                    + " per minute; retry after " + verdict.retryAfterSeconds() + " s")
                    .header("Retry-After", Long.toString(verdict.retryAfterSeconds()))
                    .header(QosClientSink.REASON_HEADER, verdict.reason()));
            return;
        }
        QosClientSink qosSink = new QosClientSink(sink, gate, (output, cached, charged) -> limiter.settle(tenant,
                verdict.second(), charged ? RateLimiter.weightedTokens(inputTokens, cached, output) - rateReserved
                        : -rateReserved));
        if (gate == null) {
            qosSink.claimDispatch();
            qosSink.dispatch(start.apply(qosSink, null));
            return;
        }
        long queuedAt = nanoClock.getAsLong();
        QosTicket[] self = new QosTicket[1]; // the room below needs the ticket it is built into
        // fleet-wide capacity: no filter and nothing to move, only where a PD prompt's cache is
        WorkerRoom room = new WorkerRoom() {
            @Override
            public Set<String> placeable() {
                return perWorker ? gate.placeable(self[0]) : null;
            }

            @Override
            public boolean place(String workerId, boolean force) {
                return !perWorker || gate.place(self[0], workerId, force);
            }

            @Override
            public void prefixOn(String workerId) {
                gate.prefixOn(self[0], workerId);
            }
        };
        QosTicket ticket = new QosTicket(tenant, id.priority(), reserved, inputTokens, cachedTokensOn,
                perWorker ? () -> ids(workers.get()) : null, new QosTicket.Callbacks() {
                    @Override
                    public void admitted() {
                        sink.facts().queueWait(nanoClock.getAsLong() - queuedAt);
                        if (!qosSink.claimDispatch()) {
                            return; // the client left while it waited, or it was preempted before it started
                        }
                        try {
                            qosSink.dispatch(start.apply(qosSink, room));
                        } catch (RuntimeException e) {
                            LOG.warn("unexpected failure starting an admitted request", e);
                            qosSink.abort(e);
                        }
                    }

                    @Override
                    public void rejected(int status, String reason, long retryAfterSeconds) {
                        if (!qosSink.claimRefusal()) {
                            return; // the client already left
                        }
                        String message = switch (reason) {
                            case "queue_full" -> "the '" + id.priority().label() + "' queue is full; retry later";
                            case "queue_timeout" -> "waited past the '" + id.priority().label()
                                    + "' queue timeout for capacity; retry later";
                            default -> "no usable worker can serve this request";
                        };
                        refusal.refuse(sink, new ApiException(status, message)
                                .header("Retry-After", Long.toString(retryAfterSeconds))
                                .header(QosClientSink.REASON_HEADER, reason));
                    }

                    @Override
                    public void preempted(long retryAfterSeconds) {
                        qosSink.preempt(retryAfterSeconds);
                    }
                });
        self[0] = ticket;
        qosSink.ticket(ticket);
        gate.offer(ticket);
    }

    /** The ids of {@code workers}, as a view (no copy per look). */
    private static Collection<String> ids(List<Worker> workers) {
        return new AbstractList<>() {
            @Override
            public String get(int index) {
                return workers.get(index).id();
            }

            @Override
            public int size() {
                return workers.size();
            }
        };
    }

    void close() {
        scheduler.shutdownNow();
    }

    private void tick() {
        try {
            gate.tick();
        } catch (RuntimeException e) {
            LOG.warn("QoS tick failed", e);
        }
    }

    private void poll() {
        try {
            watcher.poll();
        } catch (RuntimeException e) {
            LOG.warn("tenants file poll failed", e);
        }
    }

    private static String bearer(String header) {
        if (header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return header.substring(7).trim();
        }
        return null;
    }
}
