package io.kvroute.router.plugin;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.kvevents.ExactCacheIndex;
import io.kvroute.router.kvevents.KvEventsConfig;
import io.kvroute.router.kvevents.KvEventsPlane;
import io.kvroute.router.kvevents.KvHashMode;
import io.kvroute.router.kvevents.SubscriptionRule;
import io.kvroute.router.kvevents.SubscriptionRule.Refusal;
import io.kvroute.router.kvevents.SubscriptionRule.Verdict;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connects the router's {@code --cache-index} to the KV-event plane: builds the plane (unless
 * {@code approximate}), hands every cache-aware policy the exact index, and subscribes each worker
 * whose advert ({@code /server_info}'s {@code kv_events} block, or an operator's template) has an
 * event range, as {@link SubscriptionRule} decides from the advert, the engine type and the block
 * size the engine reports on {@code /metrics}. A refusal is logged once per worker and reason and
 * counted as {@code kvroute_kv_events_workers_refused_total{reason}}; a worker refused after it was
 * subscribed (its engine's block size arrived later) is unsubscribed. A worker whose endpoints change
 * while it stays (a pod's KV-event annotation edited) is subscribed anew: the plane drops the old
 * endpoints' sockets and blocks before it subscribes the new ones; one whose endpoints are gone (the
 * annotation removed, no default template) is unsubscribed.
 *
 * <p>Threading: {@link #subscribe}, {@link #engineBlockSize} and {@link #forget} come from registry
 * listeners and scrape callbacks on any thread; each decides and enqueues its plane command under
 * one short lock (so an add and a remove for the same worker cannot be enqueued out of order) and
 * logs after releasing it. The plane's commands only enqueue.
 */
final class KvEventsWiring {
    private static final Logger LOG = LoggerFactory.getLogger(KvEventsWiring.class);
    private final KvEventsPlane plane;
    private final SubscriptionRule rule;
    private final EnumMap<Refusal, Counter> refused = new EnumMap<>(Refusal.class);
    private final Object lock = new Object();
    /** Block sizes engines report on /metrics, by worker id. Guarded by lock. */
    private final Map<String, Integer> engineBlockSizes = new HashMap<>();
    /** Worker id + reason pairs already logged and counted. Guarded by lock. */
    private final Set<String> reported = new HashSet<>();
    /** Workers the plane was last told to subscribe. Guarded by lock. */
    private final Set<String> subscribed = new HashSet<>();

    /** @param plane the KV-event plane, or null with {@code --cache-index approximate} (then every call is a no-op) */
    KvEventsWiring(KvEventsPlane plane, String hashFlag, MeterRegistry registry) {
        this.plane = plane;
        this.rule = new SubscriptionRule(hashFlag);
        for (Refusal r : Refusal.values()) {
            refused.put(r, Counter.builder("kvroute.kv.events.workers.refused").tag("reason", r.label())
                    .description(SubscriptionRule.REFUSED_DESCRIPTION).register(Objects.requireNonNull(registry, "registry")));
        }
    }

    static KvEventsWiring create(RouterConfig config, MeterRegistry registry, Collection<CacheAwarePolicy> policies,
            java.util.function.LongSupplier nanoClock) {
        String mode = config.kvEvents().cacheIndex().toLowerCase(Locale.ROOT);
        String hashFlag = config.kvEvents().hash();
        if (mode.equals("approximate")) {
            return new KvEventsWiring(null, hashFlag, registry);
        }
        KvHashMode defaultMode = KvHashMode.parse(hashFlag);
        KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults()
                .withSilence(Duration.ofMillis(config.kvEvents().silenceMillis()))
                .withMaxBlocksPerRank(config.kvEvents().maxBlocksPerRank())
                .withLowerTierWeight(config.kvEvents().lowerTierWeight())
                .withHashMode(defaultMode == null ? KvHashMode.ENGINE : defaultMode), nanoClock, registry, null);
        ExactCacheIndex exact = new ExactCacheIndex(plane);
        for (CacheAwarePolicy p : policies) {
            p.useExactIndex(exact, mode.equals("exact"), config.kvEvents().inflightGraceMillis()); // ticks are ms
        }
        return new KvEventsWiring(plane, hashFlag, registry);
    }

    /** The plane, or null with {@code --cache-index approximate}. */
    KvEventsPlane plane() {
        return plane;
    }

    /** Subscribes, keeps, or refuses {@code worker} as its facts now say; a worker without an event range is left alone. */
    void subscribe(Worker worker) {
        if (plane == null) {
            return;
        }
        String log = null;
        synchronized (lock) {
            Verdict verdict = rule.decide(worker, engineBlockSizes.getOrDefault(worker.id(), 0));
            if (verdict instanceof Verdict.Subscribe s) {
                KvEventsAdvert advert = s.advert();
                String host = worker.host();
                plane.addWorker(worker.id(), worker.url(), worker.modelId(), advert.eventEndpoints(host),
                        advert.replayEndpoints(host), advert.topic(), advert.blockSize(), s.hashMode(), s.vllmHash());
                subscribed.add(worker.id());
                // new endpoints may be refused again later: that is a new fact, logged and counted anew
                reported.removeIf(key -> key.startsWith(worker.id() + " "));
            } else if (verdict instanceof Verdict.None) {
                if (subscribed.remove(worker.id())) {
                    plane.removeWorker(worker.id()); // its endpoints are gone: its blocks must not answer
                }
            } else if (verdict instanceof Verdict.Refuse r) {
                subscribed.remove(worker.id());
                plane.removeWorker(worker.id()); // no-op unless it was subscribed before the refusal was known
                if (reported.add(worker.id() + " " + r.reason().label())) {
                    refused.get(r.reason()).increment();
                    log = "worker " + worker.url() + " is not subscribed to KV events and gets no exact matches: "
                            + r.message() + " (kvroute_kv_events_workers_refused_total{reason=\"" + r.reason().label()
                            + "\"})";
                }
            }
        }
        if (log != null) {
            LOG.error(log);
        }
    }

    /**
     * The block size {@code worker}'s engine reports on {@code /metrics} ({@code vllm:cache_config_info});
     * re-decides the worker's subscription when it changed.
     */
    void engineBlockSize(Worker worker, int blockSize) {
        if (plane == null || blockSize < 1) {
            return;
        }
        Integer before;
        synchronized (lock) {
            before = engineBlockSizes.put(worker.id(), blockSize);
        }
        if (before == null || before != blockSize) {
            subscribe(worker);
        }
    }

    /** The worker left the fleet: unsubscribes it and forgets what was learned and reported about it. */
    void forget(String workerId) {
        if (plane == null) {
            return;
        }
        synchronized (lock) {
            plane.removeWorker(workerId);
            subscribed.remove(workerId);
            engineBlockSizes.remove(workerId);
            reported.removeIf(key -> key.startsWith(workerId + " "));
        }
    }
}
