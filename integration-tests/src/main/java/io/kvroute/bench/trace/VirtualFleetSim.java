package io.kvroute.bench.trace;

import io.kvroute.mock.engine.CacheEventSink;
import io.kvroute.mock.engine.EngineClock;
import io.kvroute.mock.engine.EngineConfig;
import io.kvroute.mock.engine.EngineRequest;
import io.kvroute.mock.engine.EngineStats;
import io.kvroute.mock.engine.SteppedEngine;
import io.kvroute.mock.engine.TokenSink;
import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.DecisionReason;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.ToIntFunction;

/**
 * A discrete-event replay of a trace through the router's real routing code against simulated
 * engines, on a virtual clock: no sockets, no threads, no sleeping.
 *
 * <p>Events, in (time, sequence) order: an arrival is routed at once (the policy's {@code select}
 * on the workers, the request's tokens and the router-local in-flight counts, then
 * {@code recordDispatch} as the router does after dispatch) and submitted to its engine; an engine
 * wake runs one step of the mock's own engine loop ({@link SteppedEngine}) whose virtual clock the
 * step's "sleep" advances, so its outputs carry the step's end time; those outputs that the router
 * would learn later (a request's end, which releases its in-flight count, and every KV event) are
 * queued as events at that time rather than applied at once, so a decision never sees the future.
 * An engine that stepped wakes again at its step's end; one with work it cannot start (waiting for
 * KV) polls every {@link #BLOCKED_POLL_NANOS}; an idle one sleeps until its next submission.
 * Arrivals come first at their instant and in trace order; they are not queued: the trace is read
 * one request ahead, and a request's tokens live only from its arrival to its end in the engine.
 *
 * <p>Memory is what the fleet holds, not what the trace holds: per request only its outcome stays
 * (a few numbers); the engines' prefix caches and the exact index are bounded by the KV pools. The
 * engines hash their pages for KV events only when an exact index reads them.
 *
 * <p>The router's load view is its local in-flight counts, and with {@link SimLoadReports} also the
 * engines' load reports: each engine's stats are offered to the scheduler plugin's publish schedule at
 * its step's end (the step listener) and on an idle tick every {@link SimLoadReports#TICK_NANOS}, and a
 * report due is applied to the router's load table at that instant. An engine's stats between two steps
 * are those of its last step's end, never of the step it is computing ahead of the simulated now. Each
 * request captures the table's snapshot on arrival (the queue gate, hard admission, pressure and the
 * saturation pin read it) and its dispatch is recorded in the table's dispatch log. Ticks run only while
 * other work remains. Decisions are counted by reason.
 *
 * <p>Decision cost is the wall time of the snapshot capture, {@code select}, {@code recordDispatch} and
 * the dispatch-log entry, measured per request in this run. Not thread-safe; one run per instance.
 */
final class VirtualFleetSim {

    /** How often an engine holding requests it cannot admit looks again (it frees KV only by finishing). */
    static final long BLOCKED_POLL_NANOS = 5_000_000L;

    private final List<SimWorker> workers = new ArrayList<>();
    private final List<Worker> candidates;
    private final Map<String, SimWorker> byId = new HashMap<>();
    private final RoutingPolicy policy;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final SimExactIndex exact;
    /** The engines' load reports, or null: the router then sees its in-flight counts only. */
    private final SimLoadReports loads;
    private final long[] nowNanos = new long[1];
    private final Map<DecisionReason, Long> reasons = new EnumMap<>(DecisionReason.class);
    private long seq;
    /** Queued {@link Tick}s: they repeat forever, so the run ends when only they are left. */
    private int ticksQueued;
    private long decisionNanos;
    private long decisions;

    /**
     * @param exact the exact index the policy was given ({@code useExactIndex}), fed from the engines'
     *     KV events; null when the policy has none
     * @param loadReports whether the engines publish load reports to the router (its queue gate and
     *     saturation pin need them)
     */
    VirtualFleetSim(int workerCount, EngineConfig engine, RoutingPolicy policy, SimExactIndex exact,
            boolean loadReports) {
        this.policy = policy;
        this.exact = exact;
        List<Worker> list = new ArrayList<>();
        for (int i = 0; i < workerCount; i++) {
            SimWorker w = new SimWorker(i, Worker.regular("http://sim-worker-" + i + ":8000"), engine);
            workers.add(w);
            list.add(w.worker);
            byId.put(w.worker.id(), w);
            if (exact != null) {
                exact.addWorker(w.worker.id(), i);
            }
        }
        this.candidates = List.copyOf(list);
        if (loadReports) {
            List<String> ids = new ArrayList<>();
            for (Worker w : candidates) {
                ids.add(w.id());
            }
            loads = new SimLoadReports(ids, engine.runningMaxReqSize(), () -> nowNanos[0]);
            for (SimWorker w : workers) {
                // a started worker has reported its idle engine before the first request (the real run warms up first)
                loads.offer(w.index, w.shownStats, 0);
                // the workers' ticks spread over one period, as separately started servers' are
                scheduleTick(w, SimLoadReports.TICK_NANOS + SimLoadReports.TICK_NANOS * w.index / workerCount);
            }
        } else {
            loads = null;
        }
    }

    /** Simulated now, for the prefix index's LRU ticks (ms). */
    long nowMillis() {
        return nowNanos[0] / 1_000_000;
    }

    /**
     * Replays {@code trace}, whose timestamps must not decrease; returns one outcome per request in
     * trace order. Each request is taken from {@code trace} when it arrives and not kept after.
     */
    Result run(List<TraceRequest> trace, int maxOutputTokens) {
        Outcome[] outcomes = new Outcome[trace.size()];
        ToIntFunction<String> inFlight = id -> byId.get(id).inFlight;
        long lastNanos = 0;
        int next = 0; // the next request to arrive
        TraceRequest arriving = trace.isEmpty() ? null : trace.get(0);
        while (arriving != null || events.size() > ticksQueued) {
            long arrivalNanos = arriving == null ? Long.MAX_VALUE : arriving.timestampMs() * 1_000_000L;
            if (arriving != null && (events.isEmpty() || arrivalNanos <= events.peek().timeNanos)) {
                // an arrival goes before every event of its instant (as if all arrivals were queued first)
                nowNanos[0] = arrivalNanos;
                lastNanos = arrivalNanos;
                arrive(arriving, next, outcomes, inFlight, maxOutputTokens);
                next++;
                TraceRequest following = next < trace.size() ? trace.get(next) : null;
                if (following != null && following.timestampMs() < arriving.timestampMs()) {
                    throw new IllegalArgumentException("trace timestamps decrease at request " + next);
                }
                arriving = following;
                continue;
            }
            Event e = events.poll();
            nowNanos[0] = e.timeNanos;
            lastNanos = e.timeNanos;
            Object what = e.what;
            if (what instanceof Wake w) {
                wake(w.worker);
            } else if (what instanceof StepEnd s) {
                s.worker.shownStats = s.stats;
                loads.offer(s.worker.index, s.stats, e.timeNanos);
            } else if (what instanceof Tick t) {
                ticksQueued--;
                loads.offer(t.worker.index, t.worker.shownStats, e.timeNanos);
                scheduleTick(t.worker, e.timeNanos + SimLoadReports.TICK_NANOS);
            } else if (what instanceof Release r) {
                r.worker.inFlight--;
            } else if (what instanceof KvStored s) {
                exact.stored(s.slot, s.parentHash, s.hashes);
            } else if (what instanceof KvRemoved r) {
                exact.removed(r.slot, r.hashes);
            } else if (what instanceof KvCleared c) {
                exact.cleared(c.slot);
            } else {
                throw new IllegalStateException("unknown event " + what);
            }
        }
        double[] prefill = new double[workers.size()];
        for (SimWorker w : workers) {
            prefill[w.index] = w.engine.stats().processedPrefillTokens();
        }
        List<ArmSummary.Outcome> list = new ArrayList<>(outcomes.length);
        for (Outcome o : outcomes) {
            list.add(o.toSummary());
        }
        Map<String, Long> byReason = new LinkedHashMap<>();
        reasons.forEach((reason, n) -> byReason.put(reason.label(), n));
        return new Result(list, lastNanos / 1e6, prefill, decisions == 0 ? Double.NaN : decisionNanos / 1e3 / decisions,
                byReason, loads == null ? 0 : loads.sentReports());
    }

    /**
     * What a run produced: outcomes in trace order, simulated span, per-worker prefill, mean decision µs,
     * decisions per reason label (in {@link DecisionReason} order) and the load reports the engines sent.
     */
    record Result(List<ArmSummary.Outcome> outcomes, double spanMs, double[] perWorkerPrefillTokens, double decisionMicros,
            Map<String, Long> decisionReasons, long loadReports) {

        long decisions(DecisionReason reason) {
            return decisionReasons.getOrDefault(reason.label(), 0L);
        }
    }

    private void arrive(TraceRequest r, int index, Outcome[] outcomes, ToIntFunction<String> inFlight, int maxOutput) {
        int[] tokens = BlockTokens.prompt(r);
        long start = System.nanoTime();
        EngineLoadSnapshot snapshot = loads == null ? null : loads.snapshot();
        Decision d = policy.select(new RoutingRequest(candidates, inFlight, tokens.length, null, tokens, snapshot));
        if (policy instanceof CacheAwarePolicy cache) {
            cache.recordDispatch(d);
        }
        if (loads != null) {
            loads.recordDispatch(d.worker().id(), nowNanos[0]);
        }
        decisionNanos += System.nanoTime() - start;
        decisions++;
        reasons.merge(d.reason(), 1L, Long::sum);
        SimWorker w = byId.get(d.worker().id());
        w.inFlight++;
        Outcome o = new Outcome(r.timestampMs(), nowNanos[0], w);
        outcomes[index] = o;
        w.engine.submit(new EngineRequest("trace-" + index, tokens, Math.max(1, Math.min(maxOutput, r.outputLength())),
                true, false, 0), o);
        if (!w.awake) {
            w.awake = true;
            schedule(nowNanos[0], new Wake(w));
        }
    }

    private void wake(SimWorker w) {
        w.clock.nanos = Math.max(w.clock.nanos, nowNanos[0]);
        boolean stepped = w.engine.step();
        if (loads != null) {
            if (stepped) { // the step listener runs at the step's end, with the stats the step left
                schedule(w.clock.nanos, new StepEnd(w, w.engine.stats()));
            } else { // admission may have moved requests without a step: visible now
                w.shownStats = w.engine.stats();
            }
        }
        if (stepped) {
            schedule(w.clock.nanos, new Wake(w));
        } else if (w.engine.hasWork()) {
            schedule(nowNanos[0] + BLOCKED_POLL_NANOS, new Wake(w));
        } else {
            w.awake = false;
        }
    }

    private void schedule(long timeNanos, Object what) {
        events.add(new Event(timeNanos, seq++, what));
    }

    private void scheduleTick(SimWorker w, long timeNanos) {
        ticksQueued++;
        schedule(timeNanos, new Tick(w));
    }

    private record Event(long timeNanos, long seq, Object what) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            int c = Long.compare(timeNanos, o.timeNanos);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private record Wake(SimWorker worker) {}

    private record Release(SimWorker worker) {}

    /** A step ended: its stats become what the engine shows, and are offered to the load publisher. */
    private record StepEnd(SimWorker worker, EngineStats stats) {}

    /** The scheduler plugin's idle tick: the engine's current stats are offered to the load publisher. */
    private record Tick(SimWorker worker) {}

    private record KvStored(int slot, Long parentHash, long[] hashes) {}

    private record KvRemoved(int slot, long[] hashes) {}

    private record KvCleared(int slot) {}

    /** An engine clock that only the simulation moves: a step's sleep advances it. */
    private static final class VirtualClock implements EngineClock {
        long nanos;

        @Override
        public long nanoTime() {
            return nanos;
        }

        @Override
        public void sleepNanos(long n) {
            nanos += Math.max(0, n);
        }
    }

    private final class SimWorker implements CacheEventSink {
        final int index;
        final Worker worker;
        final VirtualClock clock = new VirtualClock();
        final SteppedEngine engine;
        int inFlight;
        boolean awake;
        /** The stats of the engine's last step end (or idle pass) at or before now: what a report may carry. */
        EngineStats shownStats;

        SimWorker(int index, Worker worker, EngineConfig config) {
            this.index = index;
            this.worker = worker;
            this.engine = new SteppedEngine(config, clock);
            this.shownStats = engine.stats();
            if (exact != null) { // without an index nobody reads KV events: the engine need not hash its pages
                engine.setCacheEventSink(this);
            }
        }

        @Override
        public void stored(long[] hashes, Long parentHash, int[] tokens, int pageSize) {
            schedule(clock.nanos, new KvStored(index, parentHash, hashes.clone()));
        }

        @Override
        public void removed(long[] hashes) {
            schedule(clock.nanos, new KvRemoved(index, hashes.clone()));
        }

        @Override
        public void cleared() {
            schedule(clock.nanos, new KvCleared(index));
        }
    }

    /** One request's engine outputs, timed on its engine's virtual clock. */
    private final class Outcome implements TokenSink {
        final long traceTimeMs;
        final long arrivalNanos;
        final SimWorker worker;
        long firstTokenNanos = -1;
        long endNanos = -1;
        Usage usage;
        boolean failed;

        Outcome(long traceTimeMs, long arrivalNanos, SimWorker worker) {
            this.traceTimeMs = traceTimeMs;
            this.arrivalNanos = arrivalNanos;
            this.worker = worker;
        }

        @Override
        public void onToken(int tokenId) {
            if (firstTokenNanos < 0) {
                firstTokenNanos = worker.clock.nanos;
            }
        }

        @Override
        public void onFinish(String finishReason, Usage u) {
            usage = u;
            endNanos = worker.clock.nanos;
            failed = !"length".equals(finishReason) && !"stop".equals(finishReason);
            schedule(endNanos, new Release(worker));
        }

        @Override
        public void onError(int httpStatus, String errorType, String message) {
            failed = true;
            endNanos = worker.clock.nanos;
            schedule(endNanos, new Release(worker));
        }

        ArmSummary.Outcome toSummary() {
            boolean ok = !failed && usage != null && firstTokenNanos >= 0;
            return new ArmSummary.Outcome(traceTimeMs, (firstTokenNanos - arrivalNanos) / 1e6, (endNanos - arrivalNanos) / 1e6,
                    ok ? usage.promptTokens() : 0, ok ? usage.cachedTokens() : 0, ok ? usage.completionTokens() : 0, ok);
        }
    }
}
