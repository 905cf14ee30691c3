package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import io.kvroute.protocol.LoadReport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The load plane's table without its transport: the caller hands in each decoded LoadStat report
 * itself, on its own thread, and reads {@link EngineLoadSnapshot}s exactly as a request reads them from
 * {@link LoadPlane}. Each worker's reports go through the same {@link LoadReportStream} (seq, gaps,
 * restarts, the prefill-throughput estimate), are stamped on the injected clock when applied, and are
 * read with the same freshness window and {@link DispatchLog}; only the sockets, the load-plane thread
 * and its batch window are missing, so a report is visible from the instant it is applied. For a
 * discrete-event simulation that delivers reports at simulated instants on a virtual clock (the bench's
 * virtual-time fleet), where a thread would make runs depend on the scheduler.
 *
 * <p>Threading: {@link #addWorker} and {@link #apply} must be serialized (one writer thread); each
 * publishes a new immutable {@link LoadTable} through a volatile field, so {@link #snapshot} and
 * {@link #dispatchLog} are safe from any thread. Single-rank workers only (the simulated engines have
 * no attention data parallelism).
 */
public final class DirectLoadTable {

    private final LongSupplier nanoClock;
    private final long freshnessWindowNanos;
    private final long metricsStalenessNanos;
    private final DispatchLog dispatchLog;
    private volatile LoadTable table = LoadTable.EMPTY;

    // writer thread only
    private final Map<String, Integer> index = new HashMap<>();
    private final List<LoadReportStream> streams = new ArrayList<>();

    /** @param nanoClock the router's clock: report arrival and every snapshot's capture instant */
    public DirectLoadTable(LoadPlaneConfig cfg, LongSupplier nanoClock) {
        requireNonNull(cfg, "cfg");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
        this.freshnessWindowNanos = cfg.freshnessWindow().toNanos();
        this.metricsStalenessNanos = cfg.metricsStaleness().toNanos();
        this.dispatchLog = new DispatchLog(cfg.dispatchLogCapacity());
    }

    /** Adds a worker publishing one rank; it has no sample (so is not fresh) until its first report. */
    public void addWorker(String workerId) {
        requireNonNull(workerId, "workerId");
        if (index.containsKey(workerId)) {
            throw new IllegalArgumentException("worker " + workerId + " is already in the table");
        }
        LoadTable t = table;
        WorkerState[] states = new WorkerState[t.workers().length + 1];
        System.arraycopy(t.workers(), 0, states, 0, t.workers().length);
        states[states.length - 1] = WorkerState.empty(workerId, List.of(), 1);
        index.put(workerId, states.length - 1);
        streams.add(new LoadReportStream(1));
        table = new LoadTable(t.version() + 1, Map.copyOf(index), states);
    }

    /**
     * Applies one report of {@code workerId}'s rank 0, received now on the injected clock, as the load
     * plane applies a report from the worker's socket.
     *
     * @return false when the stream refused or ignored it (an end-of-replay seq, a rank other than 0)
     */
    public boolean apply(String workerId, LoadReport report) {
        requireNonNull(report, "report");
        Integer i = index.get(workerId);
        if (i == null) {
            throw new IllegalArgumentException("worker " + workerId + " is not in the table");
        }
        LoadTable t = table;
        LoadReportStream.Step step = streams.get(i).apply(t.workers()[i], 0, report, nanoClock.getAsLong());
        if (step.verdict() == LoadReportStream.Verdict.IGNORED
                || step.verdict() == LoadReportStream.Verdict.RANK_OUT_OF_RANGE) {
            return false;
        }
        WorkerState[] states = t.workers().clone();
        states[i] = step.next();
        table = new LoadTable(t.version() + 1, t.index(), states);
        return true;
    }

    /** The current immutable view, captured now on the injected clock, as {@link LoadPlane#snapshot()}. */
    public EngineLoadSnapshot snapshot() {
        return new EngineLoadSnapshot(table, nanoClock.getAsLong(), freshnessWindowNanos, metricsStalenessNanos,
                dispatchLog);
    }

    /** Where the router records its own dispatches; snapshots add them to {@code num_waiting_reqs}. */
    public DispatchLog dispatchLog() {
        return dispatchLog;
    }
}
