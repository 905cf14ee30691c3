package io.kvroute.mock.engine;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The simplest honest engine: every request runs independently on a timer, with no shared batch,
 * no queueing and no KV cache. Prefill takes {@code TimeModel.stepMillis(inputLen, false)}, then
 * one token per {@code decodeMsPerStep}. Useful as a baseline and for HTTP-layer tests; the
 * scheduled engine replaces it as the mock worker's default.
 */
public final class SimpleEngine implements Engine {

    private final TimeModel timeModel;
    private final EngineInfo info;
    private final ScheduledExecutorService timers;
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicLong prefillTokens = new AtomicLong();

    public SimpleEngine(TimeModel timeModel) {
        this.timeModel = Objects.requireNonNull(timeModel, "timeModel");
        this.info = new EngineInfo(0, 0, 1, "none", "none");
        this.timers = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "mock-simple-engine");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public Submission submit(EngineRequest request, TokenSink sink) {
        Run run = new Run(request, sink);
        running.incrementAndGet();
        run.schedule(timeModel.wallNanos(timeModel.stepMillis(request.inputIds().length, false)));
        return run::abort;
    }

    @Override
    public EngineStats stats() {
        return new EngineStats(running.get(), 0, 0, 0, 0, 0, prefillTokens.get(), 0, prefillTokens.get(), 0);
    }

    @Override
    public EngineInfo info() {
        return info;
    }

    @Override
    public Map<String, Object> schedulerView() {
        return Map.of("engine", "simple", "running", running.get());
    }

    @Override
    public void addStepListener(java.util.function.Consumer<EngineStats> listener) {
        // no steps: every request runs on its own timer
    }

    @Override
    public void close() {
        timers.shutdownNow();
    }

    private final class Run implements Runnable {
        private final EngineRequest request;
        private final TokenSink sink;
        private int emitted;
        private volatile boolean aborted;
        private volatile ScheduledFuture<?> next;
        private boolean finished;

        Run(EngineRequest request, TokenSink sink) {
            this.request = request;
            this.sink = sink;
        }

        void schedule(long delayNanos) {
            next = timers.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public synchronized void run() {
            if (aborted || finished) {
                return;
            }
            if (emitted == 0) {
                prefillTokens.addAndGet(request.inputIds().length);
                sink.onPrefillDone(0);
            }
            sink.onToken(TokenIds.output(request.requestId(), emitted));
            emitted++;
            if (emitted >= request.maxNewTokens()) {
                finished = true;
                running.decrementAndGet();
                sink.onFinish("length", new TokenSink.Usage(request.inputIds().length, emitted, 0));
                return;
            }
            schedule(timeModel.wallNanos(timeModel.decodeMsPerStep()));
        }

        synchronized void abort() {
            if (aborted || finished) {
                return;
            }
            aborted = true;
            finished = true;
            running.decrementAndGet();
            ScheduledFuture<?> pending = next;
            if (pending != null) {
                pending.cancel(false);
            }
            sink.onFinish("abort", new TokenSink.Usage(request.inputIds().length, emitted, 0));
        }
    }
}
