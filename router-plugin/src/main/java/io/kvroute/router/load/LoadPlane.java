package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import io.kvroute.protocol.MalformedReason;
import io.kvroute.protocol.LoadStatWire;
import static java.util.Objects.requireNonNull;

import io.kvroute.router.zmq.SubscriberLoop;
import io.kvroute.router.zmq.SubscriberLoop.Subscription;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.zeromq.ZContext;

/**
 * The router's engine load plane: one SUB socket per advertised endpoint (one per dp rank, as the
 * worker advertises), all owned by ONE load-plane thread, a {@link SubscriberLoop} (ZeroMQ sockets are
 * single-threaded). Each worker's reports go through its {@link LoadReportStream} (seq, gaps, restarts),
 * a pure state machine; this class holds the membership and publishes the table.
 *
 * <p><b>Concurrency.</b> {@link #addWorker}/{@link #removeWorker} may be called from any thread;
 * they enqueue a task that the load-plane thread runs within one poll timeout (at most 50 ms).
 * The thread decodes reports, tracks {@code seq} per {@code (worker, rank)} and, after each batch,
 * publishes a new immutable {@link LoadTable} through a volatile field (copy-on-write, one array
 * copy per batch). {@link #snapshot()} and {@link #view()} read that field and are lock-free and
 * safe from any thread. No lock is held anywhere. After each batch the thread sleeps
 * {@link LoadPlaneConfig#batchWindow()} (default 5 ms) so reports from many workers share one wakeup
 * and one table version: in {@code LoadPlaneBench} (64 workers, 10k reports/s) this took the
 * thread from ~11% to ~8% of a core at 1 ms vs 5 ms (docs/benchmarks-load.md), for at most 5 ms
 * of extra report age against a 5 s freshness window.
 *
 * <p><b>Robustness.</b> Malformed frames (wrong frame count/topic/seq width, unknown tag, wrong
 * arity, bad fields, garbage bytes, a rank beyond the worker's dp size) are dropped and counted by
 * reason; an unexpected exception in one iteration is counted and the loop goes on. ZeroMQ
 * reconnects by itself; a publisher that restarts shows a {@code seq} that goes backwards, which
 * resets that rank's seq and throughput tracking instead of counting a gap. The first reports after
 * a connect may be lost (slow joiner); nothing depends on them. A worker silent for
 * {@link LoadPlaneConfig#resubscribeAfter()} (default 3 s, on the injected clock, as every other time of
 * the plane) gets a new SUB socket (works around a JeroMQ handshake stall, see {@link SubscriberLoop});
 * counted as {@code kvroute_load_resubscribes_total}.
 *
 * <p><b>Scraped workers.</b> A worker that pushes nothing (vLLM) is registered with
 * {@link #addScrapedWorker}; it gets no socket, and {@link MetricsScraper} hands its readings in
 * through {@link #applyScrape} as commands, so the same thread owns every state and the table is
 * published the same way. Its readings expire after {@link LoadPlaneConfig#metricsStaleness()}.
 *
 * <p>Follows SGLang's router ({@code experimental/sgl-router/src/policies/engine_load.rs}): table keyed by
 * {@code (worker, dp_rank)}, freshness on the receiver's clock.
 */
public final class LoadPlane implements AutoCloseable {
    /** Most messages read from one socket per wakeup, so one chatty worker cannot starve the others. */
    private static final int MAX_DRAIN_PER_SOCKET = 256;
    /** Frames kept per message; a longer message is malformed anyway. */
    private static final int MAX_FRAMES = 3;

    private final LoadPlaneConfig cfg;
    private final LongSupplier nanoClock;
    private final long freshnessWindowNanos;
    private final long metricsStalenessNanos;
    private final long resubscribeAfterNanos;
    private final DispatchLog dispatchLog;
    private final LoadMetrics metrics;
    private final SubscriberLoop loop;
    private volatile LoadTable table = LoadTable.EMPTY;

    // load-plane thread only
    private final LinkedHashMap<String, WorkerSlot> slots = new LinkedHashMap<>();
    private WorkerSlot[] slotArray = new WorkerSlot[0];
    private WorkerState[] states = new WorkerState[0];
    private Map<String, Integer> index = Map.of();
    /** States of workers added since the last reindex. */
    private final Map<String, WorkerState> pendingStates = new HashMap<>();
    private boolean membershipChanged;
    /** Some state changed since the last publish. */
    private boolean changed;

    public LoadPlane(LoadPlaneConfig cfg, LongSupplier nanoClock, MeterRegistry registry) {
        this(cfg, nanoClock, registry, null);
    }

    /**
     * @param nanoClock the router's clock: sample arrival, freshness and the resubscribe watchdog
     * @param sharedContext a ZeroMQ context shared with in-process publishers (needed for
     *        {@code inproc://}), or null for the plane to own one
     */
    public LoadPlane(LoadPlaneConfig cfg, LongSupplier nanoClock, MeterRegistry registry, ZContext sharedContext) {
        this.cfg = requireNonNull(cfg, "cfg");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
        requireNonNull(registry, "registry");
        this.freshnessWindowNanos = cfg.freshnessWindow().toNanos();
        this.metricsStalenessNanos = cfg.metricsStaleness().toNanos();
        this.resubscribeAfterNanos = cfg.resubscribeAfter().toNanos();
        this.dispatchLog = new DispatchLog(cfg.dispatchLogCapacity());
        this.metrics = new LoadMetrics(registry, this::snapshot);
        this.loop = new SubscriberLoop(new SubscriberLoop.Settings("kvroute-load-plane", MAX_FRAMES,
                MAX_DRAIN_PER_SOCKET, cfg.batchWindow().toNanos()), nanoClock, sharedContext);
    }

    /** Starts the load-plane thread. Workers added before start are subscribed on start. */
    public void start() {
        loop.start(new Handler());
    }

    /** Subscribes to a worker with one endpoint per dp rank (dp size = number of endpoints). */
    public void addWorker(String workerId, List<String> endpoints) {
        addWorker(workerId, endpoints, endpoints.size());
    }

    /**
     * Subscribes to a worker whose {@code dpSize} ranks publish on {@code endpoints}. Adding a known
     * worker with different endpoints or dp size replaces its subscription and forgets its samples;
     * with the same ones it is a no-op.
     */
    public void addWorker(String workerId, List<String> endpoints, int dpSize) {
        addWorker(workerId, endpoints, dpSize, "load");
    }

    /** As {@link #addWorker(String, List, int)}, subscribing to {@code topic} (SGLang's {@code load_topic}). */
    public void addWorker(String workerId, List<String> endpoints, int dpSize, String topic) {
        requireNonNull(workerId, "workerId");
        requireNonNull(topic, "topic");
        List<String> eps = List.copyOf(endpoints);
        if (eps.isEmpty()) {
            throw new IllegalArgumentException("worker " + workerId + " advertises no load endpoint");
        }
        if (dpSize < 1) {
            throw new IllegalArgumentException("worker " + workerId + " dp size must be at least 1, got " + dpSize);
        }
        if (eps.size() != 1 && eps.size() != dpSize) {
            throw new IllegalArgumentException("worker " + workerId + " advertises " + eps.size()
                    + " load endpoints for dp size " + dpSize + "; need 1 or one per rank");
        }
        loop.execute(() -> subscribe(workerId, eps, dpSize, topic));
    }

    /**
     * Registers a worker whose load comes from {@code /metrics} scrapes ({@link #applyScrape}) instead of
     * ZeroMQ; replaces a LoadStat subscription of the same worker. Its readings expire after
     * {@link LoadPlaneConfig#metricsStaleness()}, and a stale one counts as saturated
     * ({@link EngineLoadSnapshot#countsAsSaturated}).
     */
    public void addScrapedWorker(String workerId) {
        requireNonNull(workerId, "workerId");
        loop.execute(() -> registerScraped(workerId));
    }

    /**
     * Records one scrape of a scraped worker (any thread; applied by the load-plane thread within one
     * poll timeout, stamped with the plane's clock then). A rank count different from the last one
     * resets the worker's samples. Ignored for a worker that is not registered as scraped.
     */
    void applyScrape(String workerId, List<LoadReport> ranks) {
        requireNonNull(workerId, "workerId");
        if (ranks.isEmpty()) {
            throw new IllegalArgumentException("a scrape of " + workerId + " needs at least one rank");
        }
        List<LoadReport> copy = List.copyOf(ranks);
        loop.execute(() -> applyScraped(workerId, copy));
    }

    /** Unsubscribes from a worker; its entry disappears from later snapshots. */
    public void removeWorker(String workerId) {
        requireNonNull(workerId, "workerId");
        loop.execute(() -> {
            if (slots.containsKey(workerId)) {
                closeSlot(workerId);
                dispatchLog.forget(workerId);
                membershipChanged = true;
            }
        });
    }

    /** The current immutable view, captured now on the injected clock. Lock-free, one allocation. */
    public EngineLoadSnapshot snapshot() {
        return new EngineLoadSnapshot(table, nanoClock.getAsLong(), freshnessWindowNanos, metricsStalenessNanos,
                dispatchLog);
    }

    /** Where the router records its own dispatches; snapshots add them to {@code num_waiting_reqs}. */
    public DispatchLog dispatchLog() {
        return dispatchLog;
    }

    /** The admin payload for {@code GET /v1/loads}: one map per worker (see {@link LoadView}). */
    public List<Map<String, Object>> view() {
        return LoadView.of(snapshot());
    }

    @Override
    public void close() {
        loop.close();
    }

    /** The plane's side of the loop: membership, the watchdog, reports, publishing. */
    private final class Handler implements SubscriberLoop.Handler {
        @Override
        public void onIteration(long nowNanos) {
            if (membershipChanged) {
                reindex();
                membershipChanged = false;
                changed = true;
            }
            resubscribeSilent(nowNanos); // one comparison per worker per wakeup
            publishIfChanged();
        }

        @Override
        public void onMessage(Subscription from, byte[][] frames, int count) {
            WorkerSlot.Endpoint at = (WorkerSlot.Endpoint) from.owner();
            WorkerSlot slot = at.slot();
            slot.lastMessageNanos = nanoClock.getAsLong();
            try {
                LoadReport report = LoadStatWire.decode(frames, count);
                apply(slot, slot.rankBySocket ? at.socketIndex() : report.attnDpRank(), report);
            } catch (LoadStatWire.Malformed m) {
                metrics.malformed(m.reason);
            }
        }

        @Override
        public void afterMessages() {
            publishIfChanged();
        }

        @Override
        public long pollTimeoutMillis() {
            return cfg.pollTimeout().toMillis();
        }

        @Override
        public void onLoopError(RuntimeException e) {
            metrics.loopErrors.increment();
        }

        @Override
        public void onStopped() {
            slots.clear();
            metrics.removeAll();
        }
    }

    private void subscribe(String workerId, List<String> endpoints, int dpSize, String topic) {
        WorkerSlot old = slots.get(workerId);
        if (old != null) {
            WorkerState st = pendingStates.containsKey(workerId) ? pendingStates.get(workerId) : states[old.index];
            if (st.endpoints().equals(endpoints) && st.dpSize() == dpSize && old.topic.equals(topic)) {
                return;
            }
            closeSlot(workerId);
        }
        WorkerSlot slot = new WorkerSlot(workerId, topic, endpoints.size(), dpSize);
        for (int i = 0; i < endpoints.size(); i++) {
            slot.sockets[i] = loop.subscribe(endpoints.get(i), topic, cfg.rcvHwm(), new WorkerSlot.Endpoint(slot, i));
        }
        slot.lastMessageNanos = nanoClock.getAsLong();
        slots.put(workerId, slot);
        metrics.addWorker(workerId, this::snapshot);
        pendingStates.put(workerId, WorkerState.empty(workerId, endpoints, dpSize));
        membershipChanged = true;
    }

    private void registerScraped(String workerId) {
        WorkerSlot old = slots.get(workerId);
        if (old != null) {
            if (old.sockets.length == 0) {
                return;
            }
            closeSlot(workerId);
        }
        slots.put(workerId, new WorkerSlot(workerId, "", 0, 1));
        metrics.addWorker(workerId, this::snapshot);
        pendingStates.put(workerId, WorkerState.empty(workerId, List.of(), 1, LoadSource.METRICS));
        membershipChanged = true;
    }

    /** Gives every worker silent for {@code resubscribeAfter} new SUB sockets (the JeroMQ stall workaround). */
    private void resubscribeSilent(long nowNanos) {
        for (WorkerSlot s : slotArray) {
            if (s.sockets.length > 0 && nowNanos - s.lastMessageNanos >= resubscribeAfterNanos) {
                for (Subscription socket : s.sockets) {
                    socket.reopen();
                }
                s.lastMessageNanos = nowNanos;
                s.stream.onResubscribed(); // the first seq on the new connection is not a gap
                metrics.resubscribes.increment();
            }
        }
    }

    private void closeSlot(String workerId) {
        WorkerSlot s = slots.remove(workerId);
        for (Subscription socket : s.sockets) {
            socket.close();
        }
        metrics.removeWorker(workerId);
        pendingStates.remove(workerId);
    }

    private void reindex() {
        WorkerSlot[] newWorkerSlots = slots.values().toArray(new WorkerSlot[0]);
        WorkerState[] newStates = new WorkerState[newWorkerSlots.length];
        Map<String, Integer> newIndex = new HashMap<>();
        for (int i = 0; i < newWorkerSlots.length; i++) {
            WorkerSlot s = newWorkerSlots[i];
            WorkerState pending = pendingStates.remove(s.workerId);
            newStates[i] = pending != null ? pending : states[s.index];
            s.index = i;
            newIndex.put(s.workerId, i);
        }
        pendingStates.clear();
        slotArray = newWorkerSlots;
        states = newStates;
        index = Map.copyOf(newIndex);
    }

    private void publishIfChanged() {
        if (changed) {
            changed = false;
            table = new LoadTable(table.version() + 1, index, states.clone());
        }
    }

    /** Applies one scrape to a registered scraped worker (pending or indexed); others are ignored. */
    private void applyScraped(String workerId, List<LoadReport> scraped) {
        WorkerSlot slot = slots.get(workerId);
        if (slot == null || slot.sockets.length != 0) {
            return;
        }
        WorkerState pending = pendingStates.get(workerId);
        WorkerState st = pending != null ? pending : states[slot.index];
        int n = scraped.size();
        if (st.dpSize() != n) {
            st = WorkerState.empty(workerId, List.of(), n, LoadSource.METRICS);
        }
        long now = nanoClock.getAsLong();
        RankSample[] ranks = new RankSample[n];
        for (int r = 0; r < n; r++) {
            ranks[r] = RankSample.next(st.rank(r), scraped.get(r), now);
        }
        WorkerState next = new WorkerState(st.workerId(), st.endpoints(), n, ranks, st.missedReports(), LoadSource.METRICS);
        if (pending != null) {
            pendingStates.put(workerId, next);
        } else {
            states[slot.index] = next;
        }
        metrics.received.increment();
        changed = true;
    }

    private void apply(WorkerSlot slot, int rank, LoadReport report) {
        LoadReportStream.Step step = slot.stream.apply(states[slot.index], rank, report, nanoClock.getAsLong());
        switch (step.verdict()) {
            case IGNORED:
                return;
            case RANK_OUT_OF_RANGE:
                metrics.malformed(MalformedReason.RANK_OUT_OF_RANGE);
                return;
            case GAP:
                metrics.seqGaps.increment();
                metrics.missed.increment(step.missed());
                break;
            default:
                break;
        }
        if (step.sumsOverflow()) {
            metrics.malformed(MalformedReason.SUM_OVERFLOW); // applied, but the sums are clamped
        }
        states[slot.index] = step.next();
        metrics.received.increment();
        changed = true;
    }
}
