package io.kvroute.router.ingress;

import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.dispatch.Abortable;
import io.kvroute.router.dispatch.ClientSink;
import io.kvroute.router.dispatch.Completion;
import io.kvroute.router.dispatch.ErrorBodies;
import io.kvroute.router.tenant.QosGate;
import io.kvroute.router.tenant.QosTicket;
import io.kvroute.router.worker.Worker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The client side of one request under QoS: a {@link ClientSink} in front of the transport's sink that
 * tells the {@link QosGate} when the first byte goes out (the point after which the request can no
 * longer be preempted), charges each streamed output token to the tenant as it is relayed, and ends
 * the request's QoS accounting exactly once however it ends.
 *
 * <p>Preemption: when the gate preempts the request before its first byte, this sink answers the
 * client 503 with {@code Retry-After} and {@code x-kvroute-reason: preempted} itself, aborts the
 * dispatch (both PD legs), and from then on swallows whatever the dispatch still tries to send. The
 * first-byte/preemption race is decided by the gate's compare-and-set in {@link QosGate#started}.
 *
 * <p>An answer with a 5xx status (the worker's error relayed, or the router's own, e.g. no worker reachable)
 * is the fleet's failure, not the tenant's use: its service is refunded to the tenant's counter and its rate
 * limit reservation given back, as for a request that ended before its first byte.
 *
 * <p>Output tokens are counted by an {@link OutputTokenCounter}: per streamed event that carries generated output
 * (protocol events such as the role-only first chunk, a bare {@code finish_reason}, a usage chunk or {@code [DONE]}
 * are not tokens), exactly where the stream states a count ({@code usage.completion_tokens}, SGLang's
 * {@code meta_info.completion_tokens}; a final usage settles the charge to it, down as well as up), or from the
 * {@code completion_tokens} of a whole JSON answer.
 *
 * <p>Threading: one writer at a time (the exchange's contract); the preemption and the client-gone
 * signal may come from any thread.
 */
final class QosClientSink implements ClientSink {

    /** Reason header on every QoS refusal. */
    static final String REASON_HEADER = "x-kvroute-reason";

    /**
     * Called once when the request's QoS accounting ends: output tokens counted, its input tokens cached on the
     * worker that answered (the routing decision's matched tokens at the first byte; 0 when unknown or nothing was
     * sent), and whether the tenant is charged (a byte was sent and the answer was not a 5xx of the router or a
     * worker).
     */
    interface OnEnd {
        void ended(long outputTokens, long cachedTokens, boolean charged);
    }

    private final ClientSink delegate;
    private final QosGate gate;
    private static final int WAITING = 0;
    private static final int DISPATCHED = 1;
    private static final int CLOSED = 2;
    private static final int PREEMPTED = 3;

    private final List<Consumer<Throwable>> goneListeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean ended = new AtomicBoolean();
    /**
     * Who owns the transport's response: nobody yet (waiting), the dispatch's exchange, or this sink
     * after it closed the response itself (client gone while waiting, refused after a wait) or
     * answered a preemption. Exactly one path ever ends the transport's response.
     */
    private final java.util.concurrent.atomic.AtomicInteger phase = new java.util.concurrent.atomic.AtomicInteger(WAITING);
    private final OnEnd onEnd;
    private volatile QosTicket ticket;
    private volatile Abortable dispatch;
    private volatile boolean swallowing;
    private volatile boolean started;
    /** The answer is an error of the router or a worker (5xx): nothing of it is charged to the tenant. */
    private volatile boolean failedUpstream;
    private volatile boolean gone;
    private final OutputTokenCounter output = new OutputTokenCounter(); // fed by the one writer
    /** The answering worker's matched prefix tokens, read at the first byte. */
    private volatile long cachedTokens;

    QosClientSink(ClientSink delegate, QosGate gate, OnEnd onEnd) {
        this.delegate = delegate;
        this.gate = gate;
        this.onEnd = onEnd;
        delegate.onGone(failure -> {
            gone = true;
            if (phase.compareAndSet(WAITING, CLOSED)) {
                // still waiting: leave the queue, and end the response nobody else will end
                delegate.abort(failure == null ? new IOException("client went away") : failure);
                settle();
            }
            for (Consumer<Throwable> l : goneListeners) {
                l.accept(failure);
            }
        });
    }

    void ticket(QosTicket ticket) {
        this.ticket = ticket;
    }

    boolean gone() {
        return gone;
    }

    /** Claims the response for the dispatch about to start; false when it was closed meanwhile. */
    boolean claimDispatch() {
        return phase.compareAndSet(WAITING, DISPATCHED);
    }

    /** Claims the response for a refusal after a wait; false when it was closed meanwhile (client gone). */
    boolean claimRefusal() {
        if (!phase.compareAndSet(WAITING, CLOSED)) {
            return false;
        }
        settle();
        return true;
    }

    /** The dispatch now running for this request; aborted at once if it was preempted meanwhile. */
    void dispatch(Abortable dispatch) {
        this.dispatch = dispatch;
        if (swallowing) {
            dispatch.abort("preempted by a higher-priority request");
        }
    }

    /** The gate preempted this request before its first byte. */
    void preempt(long retryAfterSeconds) {
        if (!phase.compareAndSet(WAITING, CLOSED) && !phase.compareAndSet(DISPATCHED, PREEMPTED)) {
            return; // the client is gone or the response was already closed
        }
        swallowing = true;
        Map<String, String> head = new LinkedHashMap<>();
        head.put("Content-Type", "application/json");
        head.put("Retry-After", Long.toString(retryAfterSeconds));
        head.put(REASON_HEADER, "preempted");
        delegate.begin(503, head);
        delegate.end(ByteBuffer.wrap(ErrorBodies.json(503, "service_unavailable",
                "preempted by a higher-priority request before any output; retry later")));
        Abortable d = dispatch;
        if (d != null) {
            d.abort("preempted by a higher-priority request");
        }
        settle();
    }

    @Override
    public void begin(int status, Map<String, String> headers) {
        QosTicket t = ticket;
        long matched = Math.max(0, delegate.facts().matchedTokens());
        if (gate != null && t != null && !gate.started(t, matched)) {
            swallowing = true; // preempted first: the preemption already answered the client
            return;
        }
        if (!swallowing) {
            cachedTokens = matched;
            started = true;
            failedUpstream = status >= 500;
            delegate.begin(status, headers);
        }
    }

    @Override
    public void write(ByteBuffer chunk, Completion done) {
        if (swallowing) {
            done.failed(new IOException("preempted by a higher-priority request"));
            return;
        }
        count(chunk);
        delegate.write(chunk, done);
    }

    @Override
    public void end(ByteBuffer last) {
        if (swallowing) {
            return;
        }
        count(last);
        settle(); // before the client sees the end: its next request must find this one's tokens settled
        delegate.end(last);
    }

    @Override
    public void abort(Throwable failure) {
        if (swallowing) {
            return;
        }
        settle();
        delegate.abort(failure);
    }

    @Override
    public void onGone(Consumer<Throwable> listener) {
        goneListeners.add(listener);
    }

    @Override
    public RouteFacts facts() {
        return delegate.facts();
    }

    private void settle() {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        QosTicket t = ticket;
        if (gate != null && t != null) {
            String url = delegate.facts().worker();
            gate.finished(t, url == null ? null : Worker.idFor(url), failedUpstream);
        }
        onEnd.ended(output.counted(), cachedTokens, started && !failedUpstream);
    }

    private void count(ByteBuffer chunk) {
        long tokens = output.feed(chunk);
        if (tokens != 0) {
            QosTicket t = ticket;
            if (gate != null && t != null) {
                gate.chargeOutput(t, tokens);
            }
        }
    }
}
