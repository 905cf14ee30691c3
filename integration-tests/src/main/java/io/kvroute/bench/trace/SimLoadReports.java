package io.kvroute.bench.trace;

import static java.util.Objects.requireNonNull;

import io.kvroute.mock.EngineScheduling;
import io.kvroute.mock.engine.EngineStats;
import io.kvroute.protocol.LoadReport;
import io.kvroute.protocol.LoadStat;
import io.kvroute.protocol.LoadStatWire;
import io.kvroute.router.load.DirectLoadTable;
import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.LoadPlaneConfig;
import io.kvroute.scheduler.jetty.SchedulerConfig;
import io.kvroute.scheduler.report.LoadPublisher;
import io.kvroute.scheduler.report.PublishSchedule;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The simulated engines' load reports, sent and received as the real fleet's are, at simulated
 * instants.
 *
 * <p>Engine side, per worker, what the mock worker's scheduler plugin does ({@code KvScheduler} and
 * {@code LoadPublisher} in scheduler-plugin): after every executed engine step and on an idle tick every
 * {@link SchedulerConfig#idleReportMillis()} (200 ms), the engine's stats in LoadStat shape
 * ({@link EngineScheduling#toLoadStat}: running, waiting, KV in use and reserved, the prefill counters)
 * are offered to the publisher's own {@link PublishSchedule} (the first always; then every 5th offer when a
 * value changed or 1 s has passed, the publisher's default options). A report that is due gets the
 * rank's next {@code seq} and is encoded and decoded with {@link LoadStatWire}, the bytes the SUB socket
 * would carry.
 *
 * <p>Router side: the decoded report is applied to a {@link DirectLoadTable} (the load plane's
 * {@code LoadReportStream}, freshness window and dispatch log, without the sockets) whose clock is the
 * simulation's, at the instant it was sent: no transport latency, as for KV events. Requests read it
 * through {@link #snapshot()}, and the simulation records each dispatch in its dispatch log.
 *
 * <p>Not thread-safe: the simulation thread only.
 */
final class SimLoadReports {

    /** The scheduler plugin's idle tick: a worker's load is offered this often whatever the engine does. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(SchedulerConfig.defaults().idleReportMillis());

    private final DirectLoadTable table;
    private final List<String> workerIds;
    private final PublishSchedule[] schedules;
    private final long[] nextSeq;
    private final int maxRunningRequests;
    private long sentReports;

    /**
     * @param workerIds the router's worker ids, index = the simulation's worker index
     * @param maxRunningRequests the engines' running-request limit, reported in the extension
     * @param virtualNanos the simulation's clock, injected as the router's
     */
    SimLoadReports(List<String> workerIds, int maxRunningRequests, LongSupplier virtualNanos) {
        this.workerIds = List.copyOf(workerIds);
        this.maxRunningRequests = maxRunningRequests;
        this.table = new DirectLoadTable(LoadPlaneConfig.defaults(), requireNonNull(virtualNanos, "virtualNanos"));
        LoadPublisher.Options publisher = LoadPublisher.Options.defaults();
        this.schedules = new PublishSchedule[workerIds.size()];
        this.nextSeq = new long[workerIds.size()];
        for (int i = 0; i < schedules.length; i++) {
            schedules[i] = new PublishSchedule(publisher.everySteps(), publisher.resendInterval().toNanos());
            table.addWorker(this.workerIds.get(i));
        }
    }

    /** A step's end or a tick of worker {@code index} at {@code nowNanos}, with the stats its engine shows then. */
    void offer(int index, EngineStats stats, long nowNanos) {
        LoadStat stat = EngineScheduling.toLoadStat(stats, maxRunningRequests, 0);
        if (!schedules[index].onStep(stat, nowNanos)) {
            return;
        }
        long seq = nextSeq[index]++;
        LoadReport report;
        try {
            report = LoadStatWire.decodePayload(seq, LoadStatWire.payload(stat));
        } catch (LoadStatWire.Malformed e) {
            throw new IllegalStateException("the wire format refused its own encoding of " + stat + ": " + e.reason, e);
        }
        table.apply(workerIds.get(index), report);
        sentReports++;
    }

    /** The router's load view now, as a request captures it at ingress. */
    EngineLoadSnapshot snapshot() {
        return table.snapshot();
    }

    /** The router sent one request to {@code workerId} at {@code nowNanos}. */
    void recordDispatch(String workerId, long nowNanos) {
        table.dispatchLog().recordDispatch(workerId, nowNanos);
    }

    /** Reports sent (and received: the simulation loses none). */
    long sentReports() {
        return sentReports;
    }
}
