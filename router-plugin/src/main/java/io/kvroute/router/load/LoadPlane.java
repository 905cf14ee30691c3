package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import io.kvroute.protocol.MalformedReason;
import io.kvroute.protocol.LoadStatWire;
import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The router's engine load plane: one SUB socket per advertised endpoint (one per dp rank, as the
 * worker advertises), all owned by ONE load-plane thread (ZeroMQ sockets are single-threaded).
 *
 * <p><b>Concurrency.</b> {@link #addWorker}/{@link #removeWorker} may be called from any thread;
 * they enqueue a command that the load-plane thread applies within one poll timeout (at most 50 ms).
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
 * {@link LoadPlaneConfig#resubscribeAfter()} (default 10 s, real time) gets a new SUB socket (works around a JeroMQ handshake stall, see
 * {@code resubscribeSilent}); counted as {@code kvroute_load_resubscribes_total}.
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
    /** How often the load-plane thread looks for silent workers (see {@code resubscribeSilent}). */
    private static final long WATCHDOG_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private sealed interface Command permits Add, Remove, AddScraped, Scraped {}

    private record Add(String workerId, List<String> endpoints, int dpSize, String topic) implements Command {}

    private record Remove(String workerId) implements Command {}

    /** A worker whose load the router scrapes from {@code /metrics}: no sockets, samples come as commands. */
    private record AddScraped(String workerId) implements Command {}

    /** One scrape of a scraped worker, one report per rank; the received instant is taken when applied. */
    private record Scraped(String workerId, List<LoadReport> ranks) implements Command {}

    /**
     * Load-plane-thread-only state of one subscribed worker: one SUB socket per advertised endpoint.
     * When the worker advertises one endpoint per rank (SGLang's {@code load_endpoint_port_base + r}),
     * a report's rank is the rank of the socket it came on, whatever its {@code attn_dp_rank} says
     * (SGLang's router does the same; the field may be null). A single endpoint shared by several
     * ranks is keyed by the report's {@code attn_dp_rank}.
     */
    private static final class Slot {
        final String workerId;
        final String topic;
        final ZMQ.Socket[] sockets;
        final boolean rankBySocket;
        long lastMessageNanos;
        final long[] lastSeq;
        final boolean[] seen;
        int index;

        Slot(String workerId, String topic, ZMQ.Socket[] sockets, int dpSize) {
            this.workerId = workerId;
            this.topic = topic;
            this.sockets = sockets;
            this.rankBySocket = sockets.length == dpSize;
            this.lastSeq = new long[dpSize];
            this.seen = new boolean[dpSize];
        }
    }

    private final LoadPlaneConfig cfg;
    private final LongSupplier nanoClock;
    private final long freshnessWindowNanos;
    private final long metricsStalenessNanos;
    private final long resubscribeAfterNanos;
    private final ZContext sharedContext;
    private final DispatchLog dispatchLog;
    private final LoadMetrics metrics;
    private final Queue<Command> commands = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile LoadTable table = LoadTable.EMPTY;
    private volatile boolean running = true;

    // load-plane thread only
    private final LinkedHashMap<String, Slot> slots = new LinkedHashMap<>();
    private Slot[] slotArray = new Slot[0];
    /** Poller item i reads socket {@code pollSocket[i]} of slot {@code pollSlot[i]}. */
    private Slot[] pollSlot = new Slot[0];
    private int[] pollSocket = new int[0];
    private WorkerState[] states = new WorkerState[0];
    private Map<String, Integer> index = Map.of();
    /** States of workers added in the current command batch, before reindexing. */
    private final Map<String, WorkerState> pendingStates = new HashMap<>();
    private final byte[][] frames = new byte[MAX_FRAMES][];
    /** Set by {@code applyCommands} when a scrape changed some state without changing membership. */
    private boolean scrapesApplied;

    public LoadPlane(LoadPlaneConfig cfg, LongSupplier nanoClock, MeterRegistry registry) {
        this(cfg, nanoClock, registry, null);
    }

    /**
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
        this.sharedContext = sharedContext;
        this.dispatchLog = new DispatchLog(cfg.dispatchLogCapacity());
        this.metrics = new LoadMetrics(registry, this::snapshot);
        this.thread = new Thread(this::run, "kvroute-load-plane");
        thread.setDaemon(true);
    }

    /** Starts the load-plane thread. Workers added before start are subscribed on start. */
    public void start() {
        thread.start();
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
        commands.add(new Add(workerId, eps, dpSize, topic));
    }

    /**
     * Registers a worker whose load comes from {@code /metrics} scrapes ({@link #applyScrape}) instead of
     * ZeroMQ; replaces a LoadStat subscription of the same worker. Its readings expire after
     * {@link LoadPlaneConfig#metricsStaleness()}, and a stale one counts as saturated
     * ({@link EngineLoadSnapshot#countsAsSaturated}).
     */
    public void addScrapedWorker(String workerId) {
        requireNonNull(workerId, "workerId");
        commands.add(new AddScraped(workerId));
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
        commands.add(new Scraped(workerId, List.copyOf(ranks)));
    }

    /** Unsubscribes from a worker; its entry disappears from later snapshots. */
    public void removeWorker(String workerId) {
        requireNonNull(workerId, "workerId");
        commands.add(new Remove(workerId));
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
        running = false;
        if (thread.isAlive()) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run() {
        ZContext ctx = sharedContext != null ? sharedContext : new ZContext(1);
        ZMQ.Poller poller = null;
        try {
            long pollMillis = cfg.pollTimeout().toMillis();
            long batchNanos = cfg.batchWindow().toNanos();
            long lastWatchdogNanos = System.nanoTime();
            while (running) {
                try {
                    boolean rebuild = applyCommands(ctx);
                    long now = System.nanoTime(); // transport upkeep runs on real time, not the policy clock
                    if (now - lastWatchdogNanos >= WATCHDOG_PERIOD_NANOS) {
                        lastWatchdogNanos = now;
                        rebuild |= resubscribeSilent(ctx, now);
                    }
                    if (rebuild) {
                        if (poller != null) {
                            poller.close();
                        }
                        poller = registerAll(ctx);
                        publish();
                    } else if (scrapesApplied) {
                        publish();
                    }
                    scrapesApplied = false;
                    if (pollSlot.length == 0) { // no sockets (none, or only scraped workers)
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pollMillis));
                        continue;
                    }
                    if (poller.poll(pollMillis) > 0) {
                        boolean changed = false;
                        for (int i = 0; i < pollSlot.length; i++) {
                            if (poller.pollin(i)) {
                                changed |= drain(pollSlot[i], pollSocket[i]);
                            }
                        }
                        if (changed) {
                            publish();
                        }
                        if (batchNanos > 0) {
                            LockSupport.parkNanos(batchNanos);
                        }
                    }
                } catch (RuntimeException e) {
                    if (!running) {
                        break;
                    }
                    metrics.loopErrors.increment();
                }
            }
        } finally {
            if (poller != null) {
                poller.close();
            }
            for (Slot s : slots.values()) {
                closeSockets(s);
            }
            slots.clear();
            metrics.removeAll();
            if (sharedContext == null) {
                ctx.close();
            }
        }
    }

    /** Applies queued membership commands; true when membership changed. */
    private boolean applyCommands(ZContext ctx) {
        boolean changed = false;
        Command c;
        while ((c = commands.poll()) != null) {
            if (c instanceof Add add) {
                Slot old = slots.get(add.workerId());
                if (old != null) {
                    WorkerState st = states[old.index];
                    if (st.endpoints().equals(add.endpoints()) && st.dpSize() == add.dpSize()
                            && old.topic.equals(add.topic())) {
                        continue;
                    }
                    closeSlot(ctx, add.workerId());
                }
                Slot slot = new Slot(add.workerId(), add.topic(), subscribe(ctx, add.endpoints(), add.topic()),
                        add.dpSize());
                slot.lastMessageNanos = System.nanoTime();
                slots.put(add.workerId(), slot);
                metrics.addWorker(add.workerId(), this::snapshot);
                pendingStates.put(add.workerId(), WorkerState.empty(add.workerId(), add.endpoints(), add.dpSize()));
                changed = true;
            } else if (c instanceof AddScraped add) {
                Slot old = slots.get(add.workerId());
                if (old != null) {
                    if (old.sockets.length == 0) {
                        continue;
                    }
                    closeSlot(ctx, add.workerId());
                }
                Slot slot = new Slot(add.workerId(), "", new ZMQ.Socket[0], 1);
                slots.put(add.workerId(), slot);
                metrics.addWorker(add.workerId(), this::snapshot);
                pendingStates.put(add.workerId(), WorkerState.empty(add.workerId(), List.of(), 1, LoadSource.METRICS));
                changed = true;
            } else if (c instanceof Scraped sc) {
                applyScraped(sc);
            } else if (c instanceof Remove rm) {
                if (slots.containsKey(rm.workerId())) {
                    closeSlot(ctx, rm.workerId());
                    dispatchLog.forget(rm.workerId());
                    changed = true;
                }
            }
        }
        if (changed) {
            reindex();
        }
        return changed;
    }

    /** One SUB socket per endpoint, so each report is keyed by the socket (rank) it came on. */
    private ZMQ.Socket[] subscribe(ZContext ctx, List<String> endpoints, String topic) {
        ZMQ.Socket[] out = new ZMQ.Socket[endpoints.size()];
        byte[] prefix = topic.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < out.length; i++) {
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.setRcvHWM(cfg.rcvHwm());
            sub.setLinger(0);
            sub.subscribe(prefix);
            sub.connect(endpoints.get(i));
            out[i] = sub;
        }
        return out;
    }

    private static void closeSockets(Slot s) {
        for (ZMQ.Socket socket : s.sockets) {
            socket.close();
        }
    }

    private ZMQ.Poller registerAll(ZContext ctx) {
        int n = 0;
        for (Slot s : slotArray) {
            n += s.sockets.length;
        }
        ZMQ.Poller poller = ctx.createPoller(n);
        Slot[] slotOf = new Slot[n];
        int[] socketOf = new int[n];
        int i = 0;
        for (Slot s : slotArray) {
            for (int k = 0; k < s.sockets.length; k++) {
                poller.register(s.sockets[k], ZMQ.Poller.POLLIN);
                slotOf[i] = s;
                socketOf[i] = k;
                i++;
            }
        }
        pollSlot = slotOf;
        pollSocket = socketOf;
        return poller;
    }

    /**
     * Replaces the SUB socket of every worker silent for {@code resubscribeAfter} (real time); true if any.
     * Why: in rare runs (4 in 150 in a loopback repro) a JeroMQ 0.6.0 SUB connection stalls in the
     * handshake for good (TCP established, the peer's 10-byte greeting left unread), and ZeroMQ's
     * own reconnect never fires because the connection never failed. A new socket recovers; a
     * worker that is simply down costs one socket churn per period.
     */
    private boolean resubscribeSilent(ZContext ctx, long nowNanos) {
        boolean any = false;
        for (Slot s : slotArray) {
            if (s.sockets.length > 0 && nowNanos - s.lastMessageNanos >= resubscribeAfterNanos) {
                closeSockets(s);
                ZMQ.Socket[] fresh = subscribe(ctx, states[s.index].endpoints(), s.topic);
                System.arraycopy(fresh, 0, s.sockets, 0, fresh.length);
                s.lastMessageNanos = nowNanos;
                Arrays.fill(s.seen, false); // the first seq on the new connection is not a gap
                metrics.resubscribes.increment();
                any = true;
            }
        }
        return any;
    }

    private void closeSlot(ZContext ctx, String workerId) {
        Slot s = slots.remove(workerId);
        closeSockets(s);
        metrics.removeWorker(workerId);
        pendingStates.remove(workerId);
    }

    private void reindex() {
        Slot[] newSlots = slots.values().toArray(new Slot[0]);
        WorkerState[] newStates = new WorkerState[newSlots.length];
        Map<String, Integer> newIndex = new HashMap<>();
        for (int i = 0; i < newSlots.length; i++) {
            Slot s = newSlots[i];
            WorkerState pending = pendingStates.remove(s.workerId);
            newStates[i] = pending != null ? pending : states[s.index];
            s.index = i;
            newIndex.put(s.workerId, i);
        }
        pendingStates.clear();
        slotArray = newSlots;
        states = newStates;
        index = Map.copyOf(newIndex);
    }

    private void publish() {
        table = new LoadTable(table.version() + 1, index, states.clone());
    }

    /** Reads what the socket has; true when some report was applied. */
    private boolean drain(Slot slot, int socketIndex) {
        boolean applied = false;
        ZMQ.Socket socket = slot.sockets[socketIndex];
        for (int n = 0; n < MAX_DRAIN_PER_SOCKET; n++) {
            byte[] first = socket.recv(ZMQ.DONTWAIT);
            if (first == null) {
                break;
            }
            if (n == 0) {
                slot.lastMessageNanos = System.nanoTime();
            }
            int count = 1;
            frames[0] = first;
            while (socket.hasReceiveMore()) {
                byte[] f = socket.recv(0);
                if (count < MAX_FRAMES) {
                    frames[count] = f;
                }
                count++;
            }
            try {
                LoadReport report = LoadStatWire.decode(frames, count);
                if (report.seq() != LoadStatWire.END_SEQ) { // -1 marks no report (replay end); not a gap
                    applied |= apply(slot, slot.rankBySocket ? socketIndex : report.attnDpRank(), report);
                }
            } catch (LoadStatWire.Malformed m) {
                metrics.malformed(m.reason);
            }
            Arrays.fill(frames, null);
        }
        return applied;
    }

    /** Applies one scrape to a registered scraped worker (pending or indexed); others are ignored. */
    private void applyScraped(Scraped sc) {
        Slot slot = slots.get(sc.workerId());
        if (slot == null || slot.sockets.length != 0) {
            return;
        }
        WorkerState pending = pendingStates.get(sc.workerId());
        WorkerState st = pending != null ? pending : states[slot.index];
        int n = sc.ranks().size();
        if (st.dpSize() != n) {
            st = WorkerState.empty(sc.workerId(), List.of(), n, LoadSource.METRICS);
        }
        long now = nanoClock.getAsLong();
        RankSample[] ranks = new RankSample[n];
        for (int r = 0; r < n; r++) {
            ranks[r] = RankSample.next(st.rank(r), sc.ranks().get(r), now);
        }
        WorkerState next = new WorkerState(st.workerId(), st.endpoints(), n, ranks, st.missedReports(), LoadSource.METRICS);
        if (pending != null) {
            pendingStates.put(sc.workerId(), next);
        } else {
            states[slot.index] = next;
        }
        metrics.received.increment();
        scrapesApplied = true;
    }

    private boolean apply(Slot slot, int rank, LoadReport report) {
        WorkerState st = states[slot.index];
        if (rank < 0 || rank >= st.dpSize()) {
            metrics.malformed(MalformedReason.RANK_OUT_OF_RANGE);
            return false;
        }
        long seq = report.seq();
        long missedNow = 0;
        RankSample prev = st.rank(rank);
        if (slot.seen[rank]) {
            long expected = slot.lastSeq[rank] + 1;
            if (seq > expected) {
                missedNow = seq - expected;
                metrics.seqGaps.increment();
                metrics.missed.increment(missedNow);
            } else if (seq < expected) {
                prev = null; // publisher restarted: its counters and seq started over
            }
        }
        slot.seen[rank] = true;
        slot.lastSeq[rank] = seq;
        WorkerState next = st.withSample(rank, RankSample.next(prev, report, nanoClock.getAsLong()), missedNow);
        if (WorkerLoad.sumsOverflow(next)) {
            metrics.malformed(MalformedReason.SUM_OVERFLOW); // applied, but the sums are clamped
        }
        states[slot.index] = next;
        metrics.received.increment();
        return true;
    }

}
