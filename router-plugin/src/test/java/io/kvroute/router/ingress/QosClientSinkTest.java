package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.dispatch.ClientSink;
import io.kvroute.router.dispatch.Completion;
import io.kvroute.router.tenant.PriorityClass;
import io.kvroute.router.tenant.QosGate;
import io.kvroute.router.tenant.QosListener;
import io.kvroute.router.tenant.QosTicket;
import io.kvroute.router.tenant.TenantDirectory;
import io.kvroute.router.tenant.TenantSpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** {@link QosClientSink} over a recording sink and a real {@link QosGate} on a fake clock. */
class QosClientSinkTest {

    /** Records what reaches the transport. */
    static class RecordingSink implements ClientSink {
        final List<String> calls = new ArrayList<>();
        final StringBuilder body = new StringBuilder();
        Map<String, String> head;

        @Override
        public void begin(int status, Map<String, String> headers) {
            calls.add("begin " + status);
            head = headers;
        }

        @Override
        public void write(ByteBuffer chunk, Completion done) {
            calls.add("write");
            body.append(StandardCharsets.UTF_8.decode(chunk));
            done.succeeded();
        }

        @Override
        public void end(ByteBuffer last) {
            calls.add("end");
            body.append(StandardCharsets.UTF_8.decode(last));
        }

        @Override
        public void abort(Throwable failure) {
            calls.add("abort");
        }

        Consumer<Throwable> gone;

        @Override
        public void onGone(Consumer<Throwable> listener) {
            gone = listener;
        }
    }

    private final AtomicLong nanos = new AtomicLong();
    private final QosGate gate = newGate();

    /** A gate of 1,000 tokens over one never-saturated worker, on the fake clock. */
    private QosGate newGate() {
        return new QosGate(TenantDirectory::empty, 1_000, 0, new QosGate.Fleet() {
            @Override
            public int usableWorkers() {
                return 1;
            }

            @Override
            public boolean engineSaturated() {
                return false;
            }
        }, nanos::get, QosListener.NONE);
    }

    private static final TenantSpec T = new TenantSpec("t", 1, PriorityClass.INTERACTIVE, 0, 0);

    private QosTicket ticket(PriorityClass c, long cost, List<String> events, QosClientSink[] sink) {
        return new QosTicket(T, c, cost, cost, null, new QosTicket.Callbacks() {
            @Override
            public void admitted() {
                events.add("admitted");
            }

            @Override
            public void rejected(int status, String reason, long retryAfterSeconds) {
                events.add("rejected " + status);
            }

            @Override
            public void preempted(long retryAfterSeconds) {
                sink[0].preempt(retryAfterSeconds);
            }
        });
    }

    /** One streamed chat chunk carrying {@code text}. */
    private static String textChunk(String text) {
        return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
    }

    private static ByteBuffer utf8(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void streamedEvents_areChargedAsOutputTokens_andTheEndSettlesOnce() {
        RecordingSink transport = new RecordingSink();
        long[] settled = {-1, 0};
        QosClientSink[] holder = new QosClientSink[1];
        holder[0] = new QosClientSink(transport, gate, (out, cached, started) -> {
            settled[0] = out;
            settled[1]++;
        });
        List<String> events = new ArrayList<>();
        QosTicket t = ticket(PriorityClass.DEFAULT, 100, events, holder);
        holder[0].ticket(t);
        gate.offer(t);
        holder[0].begin(200, Map.of());
        holder[0].write(utf8(textChunk("a") + textChunk("b")), Completion.of(() -> { }, f -> { }));
        holder[0].write(utf8(textChunk("c") + "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                + "data: [DONE]\n\n"), Completion.of(() -> { }, f -> { }));
        holder[0].end(ByteBuffer.allocate(0));
        holder[0].abort(new RuntimeException("late")); // ignored: already settled
        assertThat(settled[0]).isEqualTo(3);
        assertThat(settled[1]).isEqualTo(1);
        assertThat(gate.counter(PriorityClass.DEFAULT, "t")).isEqualTo(100 + 3);
        assertThat(gate.inFlightTokens()).isZero();
    }

    /**
     * The accounting settles before the client sees the end of the answer: a client that sends its next request as
     * soon as this one ends must find this one's tokens settled (its rate-limit reservation at full weight would
     * otherwise still count, and a sequential client could get a 429 it should not). Same for an abort.
     */
    @Test
    void theAccountingSettles_beforeTheClientSeesTheEndOrTheAbort() {
        for (boolean abort : new boolean[] {false, true}) {
            RecordingSink transport = new RecordingSink();
            QosClientSink[] holder = new QosClientSink[1];
            holder[0] = new QosClientSink(transport, gate, (out, cached, charged) -> transport.calls.add("settled"));
            QosTicket t = ticket(PriorityClass.DEFAULT, 100, new ArrayList<>(), holder);
            holder[0].ticket(t);
            gate.offer(t);
            holder[0].begin(200, Map.of());
            if (abort) {
                holder[0].abort(new RuntimeException("upstream gone"));
            } else {
                holder[0].end(utf8(textChunk("a")));
            }
            assertThat(transport.calls).as(abort ? "abort" : "end")
                    .containsExactly("begin 200", "settled", abort ? "abort" : "end");
            assertThat(gate.inFlightTokens()).isZero();
        }
    }

    /** The stream's final usage is the engine's own count: the tenant's charge settles to it, down as well as up. */
    @Test
    void aFinalUsageChunk_settlesTheOutputChargeToItsCount() {
        for (int usage : new int[] {1, 6}) {
            QosGate g = newGate();
            long[] settled = {-1};
            QosClientSink[] holder = new QosClientSink[1];
            holder[0] = new QosClientSink(new RecordingSink(), g, (out, cached, charged) -> settled[0] = out);
            QosTicket t = ticket(PriorityClass.DEFAULT, 100, new ArrayList<>(), holder);
            holder[0].ticket(t);
            g.offer(t);
            holder[0].begin(200, Map.of());
            holder[0].write(utf8(textChunk("a") + textChunk("b") + textChunk("c")), Completion.of(() -> { }, f -> { }));
            assertThat(g.counter(PriorityClass.DEFAULT, "t")).isEqualTo(100 + 3);
            holder[0].end(utf8("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":" + usage
                    + "}}\n\ndata: [DONE]\n\n"));
            assertThat(settled[0]).isEqualTo(usage);
            assertThat(g.counter(PriorityClass.DEFAULT, "t")).as("usage " + usage).isEqualTo(100 + usage);
        }
    }

    /**
     * A 5xx answer (the worker's error relayed, or the router's own) is the fleet's failure: the tenant's
     * counter gets its input and streamed output back and the rate limiter is told not to charge it; a 4xx
     * answer (the client's fault) stays charged.
     */
    @Test
    void aWorkerOrRouterError_isRefundedAfterItsFirstByte_aClientErrorIsNot() {
        for (int status : new int[] {502, 500, 400}) {
            QosGate g = newGate();
            boolean[] charged = {true};
            QosClientSink[] holder = new QosClientSink[1];
            holder[0] = new QosClientSink(new RecordingSink(), g, (out, cached, c) -> charged[0] = c);
            QosTicket t = ticket(PriorityClass.DEFAULT, 100, new ArrayList<>(), holder);
            holder[0].ticket(t);
            g.offer(t);
            holder[0].begin(status, Map.of());
            holder[0].write(utf8(textChunk("partial")), Completion.of(() -> { }, f -> { }));
            holder[0].end(ByteBuffer.allocate(0));
            boolean fleetFault = status >= 500;
            assertThat(charged[0]).as("charged after " + status).isEqualTo(!fleetFault);
            assertThat(g.counter(PriorityClass.DEFAULT, "t")).as("counter after " + status).isEqualTo(fleetFault ? 0 : 101);
            assertThat(g.inFlightTokens()).isZero();
        }
    }

    /**
     * A client that leaves while its request waits: nobody else will ever end its response, so the
     * sink aborts it and takes the request off the queue; a later admission or refusal finds the
     * response closed and does nothing.
     */
    @Test
    void aClientThatLeavesWhileWaiting_isAbortedOnce_andLeavesTheQueue() {
        List<String> events = new ArrayList<>();
        QosClientSink[] first = {new QosClientSink(new RecordingSink(), gate, (o, cached, s) -> { })};
        QosTicket running = ticket(PriorityClass.DEFAULT, 600, events, first);
        first[0].ticket(running);
        gate.offer(running);
        RecordingSink transport = new RecordingSink();
        long[] settledTimes = {0};
        QosClientSink[] waiting = {new QosClientSink(transport, gate, (o, cached, s) -> settledTimes[0]++)};
        QosTicket queued = ticket(PriorityClass.DEFAULT, 600, events, waiting);
        waiting[0].ticket(queued);
        gate.offer(queued);
        assertThat(gate.queued(PriorityClass.DEFAULT)).isEqualTo(1);
        transport.gone.accept(new java.io.IOException("reset"));
        assertThat(transport.calls).containsExactly("abort");
        assertThat(gate.queued(PriorityClass.DEFAULT)).isZero();
        assertThat(waiting[0].claimDispatch()).isFalse();
        assertThat(waiting[0].claimRefusal()).isFalse();
        assertThat(settledTimes[0]).isEqualTo(1);
    }

    /**
     * The rate limiter settles in weighted tokens, so the end reports the answering worker's cached input (the
     * routing decision's matched tokens when the first byte went out), the same figure the gate charges at a tenth.
     */
    @Test
    void theEnd_reportsTheAnsweringWorkersCachedTokens_asTheGateChargedThem() {
        io.kvroute.router.accesslog.RouteFacts facts = io.kvroute.router.accesslog.RouteFacts.of("/v1/chat/completions",
                io.kvroute.router.trace.TraceSpan.NOOP);
        RecordingSink transport = new RecordingSink() {
            @Override
            public io.kvroute.router.accesslog.RouteFacts facts() {
                return facts;
            }
        };
        long[] ended = {-1, -1};
        QosClientSink[] holder = new QosClientSink[1];
        holder[0] = new QosClientSink(transport, gate, (out, cached, charged) -> {
            ended[0] = out;
            ended[1] = cached;
        });
        QosTicket t = ticket(PriorityClass.DEFAULT, 100, new ArrayList<>(), holder);
        holder[0].ticket(t);
        gate.offer(t);
        facts.decision("cache_aware", "cache_primary", 999, "http://127.0.0.1:1"); // a first attempt, retried
        facts.decision("cache_aware", "cache_primary", 60, "http://127.0.0.1:2"); // the attempt that answers
        holder[0].begin(200, Map.of());
        holder[0].end(utf8("{\"usage\":{\"completion_tokens\":5}}"));
        assertThat(ended).containsExactly(5, 60);
        assertThat(gate.counter(PriorityClass.DEFAULT, "t")).as("the gate charged the same 60 at a tenth")
                .isCloseTo(100 - 0.9 * 60 + 5, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aWholeJsonAnswer_isChargedItsUsageCompletionTokens() {
        RecordingSink transport = new RecordingSink();
        long[] settled = {-1};
        QosClientSink sink = new QosClientSink(transport, null, (out, cached, started) -> settled[0] = out);
        sink.begin(200, Map.of());
        sink.end(utf8("{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\": 42,\"total_tokens\":49}}"));
        assertThat(settled[0]).isEqualTo(42);
    }

    @Test
    void aPreemptedRequest_answers503WithReasonAndRetryAfter_andSwallowsTheDispatchsLaterOutput() {
        RecordingSink victimTransport = new RecordingSink();
        QosClientSink[] victim = new QosClientSink[1];
        boolean[] startedAtEnd = {true};
        victim[0] = new QosClientSink(victimTransport, gate, (out, cached, started) -> startedAtEnd[0] = started);
        List<String> events = new ArrayList<>();
        QosTicket batch = ticket(PriorityClass.BATCH, 500, events, victim);
        victim[0].ticket(batch);
        gate.offer(batch);
        String[] aborted = {null};
        victim[0].dispatch(reason -> aborted[0] = reason);
        QosClientSink[] high = {new QosClientSink(new RecordingSink(), gate, (o, cached, s) -> { })};
        QosTicket interactive = ticket(PriorityClass.INTERACTIVE, 800, events, high);
        high[0].ticket(interactive);
        gate.offer(interactive);
        assertThat(victimTransport.calls).containsExactly("begin 503", "end");
        assertThat(victimTransport.head).containsEntry("x-kvroute-reason", "preempted").containsKey("Retry-After");
        assertThat(victimTransport.body.toString()).contains("\"code\":503");
        assertThat(aborted[0]).contains("preempted");
        assertThat(startedAtEnd[0]).isFalse();
        // the aborted dispatch's late answer never reaches the client
        victim[0].begin(200, Map.of());
        boolean[] failed = {false};
        victim[0].write(utf8("data: {}\n\n"), Completion.of(() -> { }, f -> failed[0] = true));
        victim[0].end(ByteBuffer.allocate(0));
        assertThat(victimTransport.calls).containsExactly("begin 503", "end");
        assertThat(failed[0]).isTrue();
    }
}
