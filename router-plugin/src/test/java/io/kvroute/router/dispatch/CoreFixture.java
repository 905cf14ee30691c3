package io.kvroute.router.dispatch;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.load.LoadPlaneConfig;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.Policies;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.InFlightCounters;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/** The dispatch core wired to a fake clock, a scripted upstream and a recording client: no sockets, no Jetty. */
final class CoreFixture {

    final FakeClock clock = new FakeClock();
    final ScriptedUpstream upstream = new ScriptedUpstream();
    final List<RequestOutcome> outcomes = new CopyOnWriteArrayList<>();
    final List<Abortable> active = new CopyOnWriteArrayList<>();
    final RouterMetrics metrics = new RouterMetrics();
    /** Decisions whose prompt ownership the dispatch recorded ({@code DispatchDeps.onDispatched}). */
    final List<io.kvroute.router.policy.Decision> owned = new CopyOnWriteArrayList<>();
    final RouterConfig config;
    final DispatchDeps deps;
    /** Plain dispatch's policies: round robin, also for sessions. */
    final PlainRouting plain;
    /** PD dispatch's policies (round robin for every role) and a fixed bootstrap room (42). */
    final PdRouting pd;

    CoreFixture(RouterConfig config) {
        this(config, Policies.create("round_robin", 2));
    }

    CoreFixture(RouterConfig config, RoutingPolicy roundRobin) {
        this(config, roundRobin, null);
    }

    /** With LoRA handling ({@code lora} may be null: none). */
    CoreFixture(RouterConfig config, RoutingPolicy roundRobin, io.kvroute.router.lora.LoraRouting lora) {
        this.config = config;
        this.plain = new PlainRouting(roundRobin, roundRobin);
        this.pd = new PdRouting(roundRobin, roundRobin, roundRobin, () -> 42L);
        this.deps = new DispatchDeps(new InFlightCounters(), new Breakers(false, 5, 1, 1, clock::nanoTime, (id, t) -> { }),
                metrics,
                new LoadPlane(LoadPlaneConfig.defaults(), clock::nanoTime, new SimpleMeterRegistry()), owned::add,
                new InFlightRequests() {
                    @Override
                    public void add(Abortable request) {
                        active.add(request);
                    }

                    @Override
                    public void remove(Abortable request) {
                        active.remove(request);
                    }
                }, upstream, new UpstreamRequests(60_000, 10_000), clock,
                RetryRule.from(config.retry(), config.pd().busyRetryNanos(), () -> 0.5), outcomes::add, lora);
    }

    Route route(boolean streaming, Worker... workers) {
        List<Worker> pool = List.of(workers);
        return new Route(ApiKind.COMPLETIONS, "{\"prompt\":\"hi\"}".getBytes(StandardCharsets.UTF_8), streaming, 1, null,
                deps.loads().snapshot(), new RouteHints(null, null, "default"), () -> pool);
    }

    /** An upstream whose answers the test scripts call by call. */
    static final class ScriptedUpstream implements Upstream {
        final List<Sent> sent = new CopyOnWriteArrayList<>();

        @Override
        public Call send(UpstreamRequest request, Listener listener) {
            Sent call = new Sent(request, listener);
            sent.add(call);
            return call;
        }
    }

    /** One upstream call: what was sent and the listener to drive. */
    static final class Sent implements Upstream.Call {
        final UpstreamRequest request;
        final Upstream.Listener listener;
        volatile Throwable aborted;

        Sent(UpstreamRequest request, Upstream.Listener listener) {
            this.request = request;
            this.listener = listener;
        }

        @Override
        public void abort(Throwable cause) {
            if (aborted == null) {
                aborted = cause;
                listener.onComplete(0, cause);
            }
        }

        void headers(int status, String contentType) {
            Map<String, String> headers = Map.of("Content-Type", contentType);
            listener.onHeaders(status, headers::get);
        }

        /** Sends a chunk; returns the completion the relay gave (null until it calls back). */
        List<Boolean> chunk(String text) {
            List<Boolean> done = new ArrayList<>();
            listener.onContent(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)),
                    Completion.of(() -> done.add(true), failure -> done.add(false)));
            return done;
        }

        void complete(int status) {
            listener.onComplete(status, null);
        }

        void fail(int status, Throwable failure) {
            listener.onComplete(status, failure);
        }
    }

    /** A client that records everything; writes complete at once unless {@link #holdWrites}. */
    static class RecordingSink implements ClientSink {
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        final List<String> calls = new CopyOnWriteArrayList<>();
        volatile int status;
        volatile Map<String, String> headers = new LinkedHashMap<>();
        volatile Consumer<Throwable> gone;
        volatile boolean holdWrites;
        final List<Completion> heldWrites = new CopyOnWriteArrayList<>();

        @Override
        public void begin(int status, Map<String, String> headers) {
            calls.add("begin");
            this.status = status;
            this.headers = headers;
        }

        @Override
        public synchronized void write(ByteBuffer chunk, Completion done) {
            calls.add("write");
            byte[] bytes = new byte[chunk.remaining()];
            chunk.get(bytes);
            body.write(bytes, 0, bytes.length);
            if (holdWrites) {
                heldWrites.add(done);
            } else {
                done.succeeded();
            }
        }

        @Override
        public synchronized void end(ByteBuffer last) {
            calls.add("end");
            byte[] bytes = new byte[last.remaining()];
            last.get(bytes);
            body.write(bytes, 0, bytes.length);
        }

        @Override
        public void abort(Throwable failure) {
            calls.add("abort");
        }

        @Override
        public void onGone(Consumer<Throwable> listener) {
            gone = listener;
        }

        String text() {
            return body.toString(StandardCharsets.UTF_8);
        }

        long terminalCalls() {
            return calls.stream().filter(c -> c.equals("end") || c.equals("abort")).count();
        }
    }

    static Function<String, String> none() {
        return name -> null;
    }
}
