package io.kvroute.router.load;

import io.kvroute.protocol.MalformedReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The load plane's meters ({@code kvroute_load_*} in Prometheus). Counters are thread-safe; the
 * per-worker gauges are added and removed by the load-plane thread only. One load plane per
 * registry: Micrometer deduplicates meters by name and tags, so a second plane's gauges would read
 * the first plane. Gauges hold their supplier strongly: Micrometer's default weak reference let a
 * method-reference supplier be collected, and the gauge read NaN (caught by LoadPlaneTest).
 */
final class LoadMetrics {
    private final MeterRegistry registry;
    final Counter received;
    final Counter seqGaps;
    final Counter missed;
    final Counter loopErrors;
    final Counter resubscribes;
    private final Gauge freshWorkers;
    private final Gauge workers;
    private final Gauge staleSaturated;
    private final EnumMap<LoadSource, Gauge> bySource = new EnumMap<>(LoadSource.class);
    private final EnumMap<MalformedReason, Counter> malformed = new EnumMap<>(MalformedReason.class);
    private final Map<String, Gauge> ageGauges = new HashMap<>(); // load-plane thread only

    LoadMetrics(MeterRegistry registry, Supplier<EngineLoadSnapshot> snapshots) {
        this.registry = registry;
        received = Counter.builder("kvroute.load.reports.received")
                .description("Load reports decoded and applied").register(registry);
        seqGaps = Counter.builder("kvroute.load.seq.gaps")
                .description("Times a rank's seq jumped forward by more than one").register(registry);
        missed = Counter.builder("kvroute.load.reports.missed")
                .description("Reports missing according to seq (sum of gap sizes)").register(registry);
        loopErrors = Counter.builder("kvroute.load.loop.errors")
                .description("Unexpected exceptions caught by the load-plane thread").register(registry);
        resubscribes = Counter.builder("kvroute.load.resubscribes")
                .description("SUB sockets replaced because a worker was silent for twice the freshness window")
                .register(registry);
        for (MalformedReason r : MalformedReason.values()) {
            malformed.put(r, Counter.builder("kvroute.load.reports.malformed").tag("reason", r.label())
                    .description("Messages dropped as malformed").register(registry));
        }
        freshWorkers = Gauge.builder("kvroute.load.workers.fresh", snapshots, s -> freshCount(s.get()))
                .description("Workers whose every dp rank reported within the freshness window")
                .strongReference(true).register(registry);
        staleSaturated = Gauge.builder("kvroute.load.workers.stale.saturated", snapshots, s -> staleCount(s.get()))
                .description("Scraped workers whose /metrics reading is missing or stale, counted as saturated")
                .strongReference(true).register(registry);
        for (LoadSource source : LoadSource.values()) {
            bySource.put(source, Gauge.builder("kvroute.load.workers.by.source", snapshots,
                            s -> sourceCount(s.get(), source)).tag("source", source.label())
                    .description("Workers known to the load plane, by where their load comes from")
                    .strongReference(true).register(registry));
        }
        workers = Gauge.builder("kvroute.load.workers", snapshots, s -> s.get().table().workers().length)
                .description("Workers the load plane subscribes to").strongReference(true).register(registry);
    }

    void malformed(MalformedReason reason) {
        malformed.get(reason).increment();
    }

    void addWorker(String workerId, Supplier<EngineLoadSnapshot> snapshots) {
        removeWorker(workerId);
        ageGauges.put(workerId, Gauge.builder("kvroute.load.report.age", snapshots, s -> ageSeconds(s.get(), workerId))
                .tag("worker", workerId).baseUnit("seconds")
                .description("Age of the worker's oldest rank report (NaN until every rank reported)")
                .strongReference(true).register(registry));
    }

    void removeWorker(String workerId) {
        Gauge g = ageGauges.remove(workerId);
        if (g != null) {
            registry.remove(g);
        }
    }

    /** On close: drops every gauge that reads this plane (counters stay, they are cumulative). */
    void removeAll() {
        for (String id : Map.copyOf(ageGauges).keySet()) {
            removeWorker(id);
        }
        registry.remove(freshWorkers);
        registry.remove(workers);
        registry.remove(staleSaturated);
        bySource.values().forEach(registry::remove);
    }

    private static double freshCount(EngineLoadSnapshot s) {
        int n = 0;
        for (WorkerState w : s.table().workers()) {
            if (s.isFresh(w.workerId())) {
                n++;
            }
        }
        return n;
    }

    private static double staleCount(EngineLoadSnapshot s) {
        int n = 0;
        for (WorkerState w : s.table().workers()) {
            if (s.countsAsSaturated(w.workerId())) {
                n++;
            }
        }
        return n;
    }

    private static double sourceCount(EngineLoadSnapshot s, LoadSource source) {
        int n = 0;
        for (WorkerState w : s.table().workers()) {
            if (w.source() == source) {
                n++;
            }
        }
        return n;
    }

    private static double ageSeconds(EngineLoadSnapshot s, String workerId) {
        WorkerState w = s.table().get(workerId);
        if (w == null) {
            return Double.NaN;
        }
        long oldest = w.oldestReceivedAtNanos();
        return oldest == Long.MIN_VALUE ? Double.NaN : (s.nowNanos() - oldest) / 1e9;
    }
}
