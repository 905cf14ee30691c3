package io.kvroute.router.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine load view one request uses for its whole routing decision, captured once at ingress so
 * every comparison in that decision sees the same numbers
 * (SGLang {@code experimental/sgl-router/src/policies/engine_load.rs}).
 *
 * <p>Immutable: a {@link LoadTable} version plus the instant it was captured ({@link #nowNanos()},
 * the router's clock). Freshness is judged against that instant, so every lookup in one decision
 * agrees: a worker is fresh only when EVERY one of its dp ranks reported within the freshness
 * window (summing only the fresh ranks would make a half-reporting worker look idle). Router
 * dispatches are counted up to the capture instant only (see {@link WorkerLoad} for exactly what
 * is added), and each worker's count is taken once, on its first lookup, and kept: the live
 * {@link DispatchLog} still moves under a decision (a slot reserved before the capture instant may
 * be written after it), so re-counting on every {@link #fresh} would let one decision see two loads
 * for one worker. Thread-safe; cheap to create (the per-worker answers are filled lazily).
 */
public final class EngineLoadSnapshot {
    private final LoadTable table;
    private final long nowNanos;
    private final long freshnessWindowNanos;
    private final long metricsStalenessNanos;
    private final DispatchLog dispatchLog;
    /** Each worker's fresh load as first computed; empty Optional = not fresh. */
    private final ConcurrentHashMap<String, Optional<WorkerLoad>> freshLoads = new ConcurrentHashMap<>();

    EngineLoadSnapshot(LoadTable table, long nowNanos, long freshnessWindowNanos, DispatchLog dispatchLog) {
        this(table, nowNanos, freshnessWindowNanos, LoadPlaneConfig.DEFAULT_METRICS_STALENESS.toNanos(), dispatchLog);
    }

    /** @param metricsStalenessNanos how long a scraped ({@link LoadSource#METRICS}) rank stays fresh */
    EngineLoadSnapshot(LoadTable table, long nowNanos, long freshnessWindowNanos, long metricsStalenessNanos,
            DispatchLog dispatchLog) {
        this.table = table;
        this.nowNanos = nowNanos;
        this.freshnessWindowNanos = freshnessWindowNanos;
        this.metricsStalenessNanos = metricsStalenessNanos;
        this.dispatchLog = dispatchLog;
    }

    /** Monotonic version of the underlying table; increases whenever reports or membership changed. */
    public long version() {
        return table.version();
    }

    /** The capture instant on the router's nano clock. */
    public long nowNanos() {
        return nowNanos;
    }

    public long freshnessWindowNanos() {
        return freshnessWindowNanos;
    }

    /**
     * The worker's load when every rank is fresh, with this router's later dispatches added. The
     * same answer on every call for one snapshot.
     */
    public Optional<WorkerLoad> fresh(String workerId) {
        Optional<WorkerLoad> known = freshLoads.get(workerId);
        if (known != null) {
            return known;
        }
        Optional<WorkerLoad> load = computeFresh(workerId);
        Optional<WorkerLoad> raced = freshLoads.putIfAbsent(workerId, load);
        return raced != null ? raced : load;
    }

    private Optional<WorkerLoad> computeFresh(String workerId) {
        WorkerState w = table.get(workerId);
        if (w == null || !isFresh(w)) {
            return Optional.empty();
        }
        long capturedAt = w.oldestReceivedAtNanos();
        return Optional.of(WorkerLoad.aggregate(w, dispatchLog.countBetween(workerId, capturedAt, nowNanos)));
    }

    public boolean isFresh(String workerId) {
        WorkerState w = table.get(workerId);
        return w != null && isFresh(w);
    }

    /**
     * The fresh loads of every worker in {@code workers}, or empty when the set is empty or any of
     * them lacks a fresh sample: engine data is compared only when the whole set has it (a partly
     * fresh set would make the unknown workers look idle).
     */
    public Optional<Map<String, WorkerLoad>> freshForAll(Iterable<String> workers) {
        Map<String, WorkerLoad> loads = new java.util.HashMap<>();
        for (String id : workers) {
            Optional<WorkerLoad> load = fresh(id);
            if (load.isEmpty()) {
                return Optional.empty();
            }
            loads.put(id, load.get());
        }
        return loads.isEmpty() ? Optional.empty() : Optional.of(loads);
    }

    public boolean allFresh(Iterable<String> workers) {
        boolean any = false;
        for (String id : workers) {
            any = true;
            if (!isFresh(id)) {
                return false;
            }
        }
        return any;
    }

    /**
     * True when some worker of {@code fleet} has a fresh queue reading strictly below {@code floor}
     * (the saturation pin fails closed: an unknown queue is not evidence, so stale workers never count;
     * SGLang {@code experimental/sgl-router/src/policies/admission.rs}).
     * The reading includes this router's dispatches since the report.
     */
    public boolean anyFreshQueueBelow(Iterable<String> fleet, long floor) {
        for (String id : fleet) {
            Optional<WorkerLoad> l = fresh(id);
            if (l.isPresent() && l.get().numWaitingReqs() < floor) {
                return true;
            }
        }
        return false;
    }

    /** Workers known to the load plane (added and not removed), in insertion order. */
    public List<String> workerIds() {
        List<String> ids = new ArrayList<>(table.workers().length);
        for (WorkerState w : table.workers()) {
            ids.add(w.workerId());
        }
        return ids;
    }

    /** The pressure source this worker alone would get: what {@code GET /v1/loads} shows. */
    public PressureSource pressureSource(String workerId) {
        Optional<WorkerLoad> l = fresh(workerId);
        if (l.isEmpty()) {
            return PressureSource.ROUTER_LOCAL;
        }
        return l.get().estimatedPrefillQueueMs().isPresent()
                ? PressureSource.ESTIMATED_PREFILL_QUEUE_MS : PressureSource.NATIVE_QUEUE_TOKENS;
    }

    LoadTable table() {
        return table;
    }

    /**
     * True when the worker's load comes from {@code /metrics} and its reading is missing or older than
     * the staleness bound: the queue gate rejects it and the fleet-saturation tier counts it as over
     * the limit (llm-d's rule, stale = saturated: a scrape that stopped answering is most often an
     * engine too busy to serve it). Pushed LoadStat keeps its fail-open polarity: a silent ZeroMQ
     * publisher is more often a network or configuration fault than load.
     */
    public boolean countsAsSaturated(String workerId) {
        WorkerState w = table.get(workerId);
        return w != null && w.source() == LoadSource.METRICS && !isFresh(w);
    }

    /** Where the worker's load comes from, or empty when the load plane does not know it. */
    public Optional<LoadSource> source(String workerId) {
        WorkerState w = table.get(workerId);
        return w == null ? Optional.empty() : Optional.of(w.source());
    }

    private boolean isFresh(WorkerState w) {
        long window = w.source() == LoadSource.METRICS ? metricsStalenessNanos : freshnessWindowNanos;
        for (RankSample s : w.ranks()) {
            if (s == null || nowNanos - s.receivedAtNanos() > window) {
                return false;
            }
        }
        return true;
    }
}
