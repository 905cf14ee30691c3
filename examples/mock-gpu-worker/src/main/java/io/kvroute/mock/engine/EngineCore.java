package io.kvroute.mock.engine;

import static java.util.Objects.requireNonNull;

import io.kvroute.scheduler.admission.AdmissionConfig;
import io.kvroute.scheduler.admission.AdmissionGate;
import io.kvroute.scheduler.admission.BusySignal;
import io.kvroute.scheduler.batch.BatchBudget;
import io.kvroute.scheduler.batch.PrefillChunk;
import io.kvroute.scheduler.batch.StepBatch;
import io.kvroute.scheduler.engine.StepScheduler;
import io.kvroute.scheduler.queue.SchedRequest;
import io.kvroute.scheduler.queue.WaitingQueue;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One engine's scheduling loop, single-threaded: {@link #runOnce} drains submissions and aborts,
 * runs admission (slot + KV reservation, 429 {@code server_busy} after the resource wait, and in the
 * {@code lightllm} loop the router's pending-first-chunk gate), and through the scheduler plugin's
 * engine SPI ({@link StepScheduler}) orders the ready list with the configured strategy and
 * composes the step the way the configured {@link EngineLoop} does (a
 * prefill-only or decode-only pass for {@code lightllm}, a mixed pass for {@code sglang}), submits
 * it (advancing the processed-prefill counter), "executes" it by sleeping the time model's step
 * time on the injected clock (paced, below), and emits tokens: the token produced when a prompt completes is the
 * first output token; each decoding request then gets one token per step. A request with one
 * prompt token left (a full prefix hit, or a last chunk that left one) is a decode request: its
 * decode pass computes that token and emits the first output token.
 *
 * <p>Queue order is admission order (high-priority requests inserted first), and a request keeps
 * its place while it is prefilled chunk by chunk: there is no rotation (LightLLM keeps
 * {@code infer_req_ids} in order; SGLang continues its one chunked request first).
 *
 * <p>With {@code priorityScheduling} (vLLM {@code --scheduling-policy priority}, SGLang
 * {@code --enable-priority-scheduling}) waiting requests, both those pending admission and those
 * admitted but not yet prefilled, are served by their request priority first and by the strategy
 * within one priority; without it the priority is ignored. Running requests are never preempted for
 * a higher priority (vLLM and SGLang can do that when KV runs out; the mock does not model it).
 *
 * <p>KV accounting: {@code privateTokens} (prompt KV computed beyond the cache hit, plus outputs)
 * plus the prefix cache; cache pages locked by running requests are not evictable, the rest are
 * evicted LRU when the pool overflows. Admission reserves {@code inputLen + maxNewTokens} per
 * request, so with the self request limit on, a selected chunk always finds KV.
 *
 * <p>Pacing: steps that run back to back are paced to the time model's clock, not to the host's: a step's
 * modelled time starts when the previous one's ended, so the host work between them (emitting tokens,
 * publishing KV events and stats, admission, composing the batch) and a sleep's overshoot come out of the next
 * step's sleep instead of adding to it. The model's step times are whole measured steps (host work included;
 * {@link TimeModel}), so an engine that slept them after its own host work ran slower than its model (8 real-time
 * workers sharing 2 cores: a mean end-to-end latency of 8.6 s against 7.7 s simulated for the same requests;
 * mooncake-trace in docs/benchmarks.md). At most one
 * step's time of lateness is carried; an engine that idles starts afresh. On a virtual clock host work takes
 * no time, and steps are exactly the model's.
 *
 * <p>Concurrency: {@link #submit} and {@link Handle#abort} may be called from any thread (they only
 * enqueue); everything else runs on the engine thread. Stats and the scheduler view are published
 * as immutable snapshots through volatile fields after each step.
 */
final class EngineCore {

    private final EngineConfig config;
    private final EngineClock clock;
    /** The scheduler plugin's engine SPI: ordering, the loop's batch shape, the entry gate, batch accounting. */
    private final StepScheduler scheduler;
    private final AdmissionGate<Entry> gate;
    private final WaitingQueue<Entry> queue = new WaitingQueue<>(e -> e.sched.highPriorityRequest());
    private final PrefixCache cache;
    private final Queue<Object> inbox = new ConcurrentLinkedQueue<>();
    private final List<Consumer<EngineStats>> stepListeners = new CopyOnWriteArrayList<>();

    private long privateTokens;
    /** Arrival sequence handed to requests as they leave the inbox (the strategies' tie-breaker). */
    private long nextArrivalSeq;
    private long steps;
    /** Requests admitted with inference priority (PD continuation segments), for /scheduler. */
    private long priorityAdmitted;
    private long totalPrefillUncachedTokens;
    /** Prompt tokens computed for requests aborted before they ended (the client left or was preempted). */
    private long abortedPrefillTokens;
    private long totalPrefillBusyMicros;
    /** When the last step's modelled time ended, while steps run back to back; 0 after an idle pass (pacing). */
    private long pacedUntilNanos;
    /** When the last step's sleep returned (host clock), while steps run back to back. */
    private long lastStepEndNanos;
    /** Sum of the steps' modelled times and of the time they took on this clock (the two differ by lateness). */
    private long stepModelNanosTotal;
    private long stepWallNanosTotal;
    private volatile EngineStats stats;
    private volatile Map<String, Object> view;

    EngineCore(EngineConfig config, EngineClock clock) {
        this.config = requireNonNull(config, "config");
        this.clock = requireNonNull(clock, "clock");
        // LightLLM: decode charged against KV and slots only (its own pass); SGLang: see MixedChunkSelector.
        this.scheduler = StepScheduler.create(config.strategy(), new BatchBudget(config.batchMaxTokens(),
                config.chunkedPrefillSize(), config.runningMaxReqSize(), false), config.engineLoop().stepLoop(),
                config.firstChunkGate(), config.priorityScheduling());
        this.gate = new AdmissionGate<>(new AdmissionConfig(config.nodeSelfRequestLimit(),
                config.runningMaxReqSize(), config.kvCapacityTokens(), config.resourceWaitTimeoutSecs()));
        this.cache = new PrefixCache(config.pageSize());
        publish();
    }

    /** Reports the prefix cache's pages as KV events; call before the first request. */
    void setCacheEventSink(CacheEventSink sink) {
        cache.setEventSink(sink);
    }

    /** Thread-safe: enqueues a request for the engine thread. */
    Handle submit(EngineRequest request, TokenSink sink) {
        requireNonNull(request, "request");
        if (request.inputIds().length == 0) {
            throw new IllegalArgumentException("inputIds must not be empty: " + request.requestId());
        }
        Entry e = new Entry(request, new GuardedSink(requireNonNull(sink, "sink")));
        inbox.add(e);
        return new Handle(e);
    }

    /** Thread-safe: asks the engine thread to flush the prefix cache once nothing runs or waits (see {@link Engine#flushCache}). */
    CompletableFuture<Boolean> requestFlush() {
        FlushCache f = new FlushCache(new CompletableFuture<>());
        inbox.add(f);
        return f.done;
    }

    void addStepListener(Consumer<EngineStats> listener) {
        stepListeners.add(requireNonNull(listener, "listener"));
    }

    EngineStats stats() {
        return stats;
    }

    Map<String, Object> schedulerView() {
        return view;
    }

    EngineInfo info() {
        return new EngineInfo(config.kvCapacityTokens(), config.runningMaxReqSize(), config.pageSize(),
                scheduler.strategyName(), config.engineLoop().flagValue());
    }

    boolean hasInbox() {
        return !inbox.isEmpty();
    }

    /** True when requests are inside the engine or waiting for admission. */
    boolean hasWork() {
        return !queue.isEmpty() || gate.numPending() > 0 || !inbox.isEmpty();
    }

    /**
     * One iteration on the engine thread. Returns true when a step executed (time passed), false
     * when there was nothing runnable (the caller may then wait for submissions).
     */
    boolean runOnce() throws InterruptedException {
        long nowNanos = clock.nanoTime();
        drainInbox(nowNanos);
        admit(nowNanos);
        if (queue.isEmpty()) {
            pacedUntilNanos = 0;
            publish();
            return false;
        }
        List<SchedRequest> ready = new ArrayList<>(queue.size());
        for (Entry e : queue.view()) {
            ready.add(e.sched);
        }
        long freeKv = config.kvCapacityTokens() - privateTokens - cache.referencedTokens();
        StepBatch batch = scheduler.nextBatch(ready, freeKv);
        if (batch.isEmpty()) {
            pacedUntilNanos = 0;
            publish();
            return false;
        }
        scheduler.submitted(batch); // batch accounting: counts the tokens selection already summed
        privateTokens += batch.prefillTokens() + batch.decode().size(); // a decode step computes its input token's KV
        evictOverflow();
        Map<SchedRequest, Entry> bySched = new IdentityHashMap<>();
        for (Entry e : queue.view()) {
            bySched.put(e.sched, e);
        }
        for (PrefillChunk c : batch.prefill()) {
            if (!c.request().prefillStarted()) {
                bySched.get(c.request()).sink.onPrefillStarted();
            }
        }
        TimeModel time = config.timeModel();
        double stepMillis = time.stepMillis(batch.prefillTokens(), !batch.decode().isEmpty());
        sleepPaced(time.wallNanos(stepMillis), nowNanos);
        steps++;
        totalPrefillUncachedTokens += batch.prefillTokens();
        // Prefill work only: neither the step overhead nor a mixed step's decode share counts.
        totalPrefillBusyMicros += (long) (time.prefillMillis(batch.prefillTokens()) * 1000);
        apply(batch, bySched);
        publish();
        EngineStats s = stats;
        for (Consumer<EngineStats> l : stepListeners) {
            l.accept(s);
        }
        return true;
    }

    /**
     * Sleeps until the step's modelled end: {@code stepNanos} after the previous step's modelled end when this
     * step follows it directly (lateness carried up to one step's time), else after {@code passStartNanos}.
     */
    private void sleepPaced(long stepNanos, long passStartNanos) throws InterruptedException {
        boolean backToBack = pacedUntilNanos != 0;
        long start = backToBack ? Math.max(pacedUntilNanos, passStartNanos - stepNanos) : passStartNanos;
        pacedUntilNanos = start + stepNanos;
        long left = pacedUntilNanos - clock.nanoTime();
        if (left > 0) {
            clock.sleepNanos(left);
        }
        long end = clock.nanoTime();
        stepModelNanosTotal += stepNanos;
        stepWallNanosTotal += end - (backToBack ? lastStepEndNanos : passStartNanos);
        lastStepEndNanos = end;
    }

    private void apply(StepBatch batch, Map<SchedRequest, Entry> bySched) {
        List<Entry> done = new ArrayList<>();
        for (SchedRequest r : batch.decode()) {
            Entry e = bySched.get(r);
            if (r.remainingPrefillTokens() == 1) { // its last prompt token: this pass emits the first token
                r.advancePrefill(1);
                e.sink.onPrefillDone(r.cachedLen());
            }
            emitToken(e);
            if (r.finished()) {
                done.add(e);
            }
        }
        for (PrefillChunk c : batch.prefill()) {
            Entry e = bySched.get(c.request());
            boolean completes = c.completesPrefill();
            c.request().advancePrefill(c.tokens());
            if (completes) {
                e.sink.onPrefillDone(c.request().cachedLen());
                emitToken(e);
                if (c.request().finished()) {
                    done.add(e);
                }
            }
        }
        for (Entry e : done) {
            finish(e, "length");
        }
    }

    private void emitToken(Entry e) {
        SchedRequest r = e.sched;
        r.addOutputToken();
        e.sink.onToken(1000 + (r.outputLen() - 1) % 30000);
    }

    private void finish(Entry e, String reason) {
        queue.remove(e);
        e.state = State.DONE;
        releaseResources(e, true);
        SchedRequest r = e.sched;
        e.sink.onFinish(reason, new TokenSink.Usage(r.inputLen(), r.outputLen(), r.cachedLen()));
    }

    private void releaseResources(Entry e, boolean cachePrompt) {
        SchedRequest r = e.sched;
        // KV of the last generated token is never computed (the next decode step would do it)
        privateTokens -= (r.kvLen() - r.cachedLen()) + Math.max(0, r.outputLen() - 1);
        if (cachePrompt && r.isDecode()) {
            cache.insert(e.request.inputIds(), r.inputLen()); // its private prompt pages become cache pages
        }
        cache.unlock(e.match);
        gate.release(kvReservation(e.request));
        evictOverflow();
    }

    private void evictOverflow() {
        long overflow = privateTokens + cache.cachedTokens() - config.kvCapacityTokens();
        if (overflow > 0) {
            cache.evict(overflow);
        }
    }

    private void drainInbox(long nowNanos) {
        Object cmd;
        while ((cmd = inbox.poll()) != null) {
            if (cmd instanceof Entry e) {
                if (e.aborted.get()) {
                    e.state = State.DONE;
                    e.sink.onFinish("abort", new TokenSink.Usage(e.request.inputIds().length, 0, 0));
                    continue;
                }
                e.state = State.PENDING;
                e.arrivalSeq = nextArrivalSeq++;
                gate.offer(e, kvReservation(e.request),
                        e.request.highPriorityRequest() || e.request.segmentIndex() > 0, requestPriority(e.request), nowNanos);
            } else if (cmd instanceof Abort a) {
                abort(a.entry);
            } else if (cmd instanceof FlushCache f) {
                flush(f);
            }
        }
    }

    /** Requests submitted before the flush are pending or in the engine by now: refuse then, as SGLang does. */
    private void flush(FlushCache f) {
        if (!queue.isEmpty() || gate.numPending() > 0) {
            f.done.complete(false);
            return;
        }
        cache.flush();
        publish();
        f.done.complete(true);
    }

    /**
     * Ends every request still inside or waiting to enter the engine with {@code abort}; called by
     * the closing thread after the engine thread stopped (join gives the visibility).
     */
    void abortAll() {
        drainInbox(clock.nanoTime());
        for (Entry e : List.copyOf(queue.view())) {
            abort(e);
        }
        for (Entry e : gate.drainPending()) {
            e.state = State.DONE;
            e.sink.onFinish("abort", new TokenSink.Usage(e.request.inputIds().length, 0, 0));
        }
        publish();
    }

    private void abort(Entry e) {
        if (e.state == State.PENDING && gate.cancel(e)) {
            e.state = State.DONE;
            e.sink.onFinish("abort", new TokenSink.Usage(e.request.inputIds().length, 0, 0));
        } else if (e.state == State.ADMITTED && queue.remove(e)) {
            e.state = State.DONE;
            SchedRequest r = e.sched;
            abortedPrefillTokens += r.kvLen() - r.cachedLen(); // read before the release: the prompt work thrown away
            releaseResources(e, false);
            e.sink.onFinish("abort", new TokenSink.Usage(r.inputLen(), r.outputLen(), r.cachedLen()));
        }
    }

    /** The request's priority as the scheduler orders it, 0 unless priority scheduling is on. */
    private int requestPriority(EngineRequest request) {
        return config.priorityScheduling() ? request.priority() : 0;
    }

    private void admit(long nowNanos) {
        List<SchedRequest> inEngine = new ArrayList<>(queue.size());
        for (Entry e : queue.view()) {
            inEngine.add(e.sched);
        }
        AdmissionGate.Outcome<Entry> outcome = gate.poll(nowNanos,
                scheduler.entryBudget(inEngine, e -> e.request.inputIds().length));
        for (Entry e : outcome.admitted()) {
            EngineRequest req = e.request;
            int inputLen = req.inputIds().length;
            e.sched = scheduler.admit(req.requestId(), e.arrivalSeq, inputLen, req.maxNewTokens(),
                    req.highPriorityRequest(), req.segmentIndex(), requestPriority(req));
            if (e.sched.inferHighPriority() < 0) {
                priorityAdmitted++;
            }
            e.match = cache.matchAndLock(req.inputIds(), inputLen - 1);
            e.sched.admitWithCachedLen(e.match.cachedTokens);
            e.state = State.ADMITTED;
            queue.add(e);
        }
        for (AdmissionGate.Rejected<Entry> rej : outcome.rejected()) {
            rej.request().state = State.DONE;
            rej.request().sink.onError(BusySignal.HTTP_STATUS, BusySignal.ERROR_TYPE,
                    BusySignal.message(rej.request().request.requestId(), rej.waitedMillis()) + ": " + rej.reason());
        }
    }

    private static long kvReservation(EngineRequest r) {
        return (long) r.inputIds().length + r.maxNewTokens();
    }

    private void publish() {
        int running = 0;
        int waiting = gate.numPending();
        long waitingUncached = 0;
        List<Map<String, Object>> runningView = new ArrayList<>();
        List<Map<String, Object>> waitingView = new ArrayList<>();
        for (Entry e : queue.view()) {
            SchedRequest r = e.sched;
            boolean isRunning = r.isDecode() || r.prefillStarted();
            if (isRunning) {
                running++;
            } else {
                waiting++;
                waitingUncached += r.remainingPrefillTokens();
            }
            (isRunning ? runningView : waitingView).add(describe(r));
        }
        long usedTokens = privateTokens + cache.referencedTokens();
        long totalTokens = usedTokens + unmaterializedReservations();
        stats = new EngineStats(running, waiting, usedTokens, totalTokens, config.kvCapacityTokens(), waitingUncached,
                totalPrefillUncachedTokens, totalPrefillBusyMicros, scheduler.processedPrefillTokens(), steps);
        Map<String, Object> counters = new LinkedHashMap<>();
        counters.put("num_running_reqs", running);
        counters.put("num_waiting_reqs", waiting);
        counters.put("num_pending_admission", gate.numPending());
        counters.put("num_used_tokens", usedTokens);
        counters.put("num_total_tokens", totalTokens);
        counters.put("num_cached_tokens", cache.cachedTokens());
        counters.put("max_total_num_tokens", config.kvCapacityTokens());
        counters.put("processed_prefill_tokens", scheduler.processedPrefillTokens());
        counters.put("total_prefill_uncached_tokens", totalPrefillUncachedTokens);
        counters.put("steps", steps);
        counters.put("step_model_micros", stepModelNanosTotal / 1_000);
        counters.put("step_wall_micros", stepWallNanosTotal / 1_000);
        counters.put("inference_priority_admitted", priorityAdmitted);
        counters.put("aborted_prefill_tokens", abortedPrefillTokens);
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("strategy", scheduler.strategyName());
        v.put("engine_loop", config.engineLoop().flagValue());
        v.put("priority_scheduling", config.priorityScheduling());
        v.put("budgets", scheduler.describe().get("budgets"));
        v.put("waiting", List.copyOf(waitingView));
        v.put("running", List.copyOf(runningView));
        v.put("counters", counters);
        view = Collections.unmodifiableMap(v);
    }

    /**
     * KV that admitted requests reserved (prompt beyond the cache hit plus max new tokens) but have
     * not computed yet: added to the tokens in use, it is {@code num_total_tokens}.
     */
    private long unmaterializedReservations() {
        long sum = 0;
        for (Entry e : queue.view()) {
            SchedRequest r = e.sched;
            long reserved = (long) (r.inputLen() - r.cachedLen()) + r.maxNewTokens();
            long computed = (long) (r.kvLen() - r.cachedLen()) + Math.max(0, r.outputLen() - 1);
            sum += Math.max(0, reserved - computed);
        }
        return sum;
    }

    private static Map<String, Object> describe(SchedRequest r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("request_id", r.requestId());
        m.put("arrival_seq", r.arrivalSeq());
        m.put("input_len", r.inputLen());
        m.put("cached_len", r.cachedLen());
        m.put("kv_len", r.kvLen());
        m.put("output_len", r.outputLen());
        m.put("high_priority_request", r.highPriorityRequest());
        m.put("infer_high_priority", r.inferHighPriority());
        m.put("segment_index", r.segmentIndex());
        return Collections.unmodifiableMap(m);
    }

    private enum State { SUBMITTED, PENDING, ADMITTED, DONE }

    /** A request's engine-thread state. */
    private static final class Entry {
        final EngineRequest request;
        final TokenSink sink;
        final AtomicBoolean aborted = new AtomicBoolean();
        State state = State.SUBMITTED;
        long arrivalSeq;
        SchedRequest sched;
        PrefixCache.Match match;

        Entry(EngineRequest request, TokenSink sink) {
            this.request = request;
            this.sink = sink;
        }
    }

    private record Abort(Entry entry) {}

    private record FlushCache(CompletableFuture<Boolean> done) {}

    /** The abort handle returned to submitters; thread-safe and idempotent. */
    final class Handle implements Engine.Submission {
        private final Entry entry;

        private Handle(Entry entry) {
            this.entry = entry;
        }

        @Override
        public void abort() {
            if (entry.aborted.compareAndSet(false, true)) {
                inbox.add(new Abort(entry));
            }
        }
    }
}
