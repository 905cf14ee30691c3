package io.kvroute.router.dispatch;

import io.kvroute.router.dispatch.PdAttemptState.Event;
import io.kvroute.router.dispatch.PdAttemptState.Transition;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.Function;

/**
 * One segment attempt on one pair: a prefill call (its answer buffered, bounded) and a decode call
 * (streamed through {@link PdDispatch}). Its state is one {@link PdAttemptState}, moved only by
 * {@link #fire}; decisions are made by {@link PdDispatch} from the {@link Transition} it returns.
 *
 * <p>Threading: each call's callbacks are serial; {@link #fire} may come from any thread. The state
 * and the two call handles are guarded by this object's lock, which is held only to compute and
 * publish the next state: the calls a transition aborts, and everything the caller does with the
 * transition, run after the lock is released. A call aborted before its handle was attached is
 * aborted when it is attached.
 */
final class PdAttempt {

    /** Bounds each buffered answer (prefill body, a decode error or non-streamed body). */
    static final int MAX_BUFFERED_BYTES = 64 << 20;

    /** The decode call's status line: what its completion is judged by. */
    record DecodeHead(int status, String contentType, String retryAfter) {
        static final DecodeHead NONE = new DecodeHead(0, null, null);
    }

    final Worker prefillWorker;
    final Worker decodeWorker;
    final int segment;
    /** 1-based attempt number within the client request. */
    final int number;
    /** Records the prefill decision's prompt ownership when the prefill worker answers 2xx. */
    private final OwnershipOnAccept ownership;
    private final TraceSpan segmentSpan;
    private final TraceSpan prefillSpan;
    private final TraceSpan decodeSpan;

    private PdAttemptState state = PdAttemptState.START; // guarded by this
    private Upstream.Call toPrefill; // guarded by this
    private Upstream.Call toDecode; // guarded by this
    private volatile DecodeHead decodeHead = DecodeHead.NONE;
    private final ByteArrayOutputStream decodeBuffer = new ByteArrayOutputStream(); // touched by the decode callbacks only

    PdAttempt(Worker prefillWorker, Worker decodeWorker, int segment, int number, OwnershipOnAccept ownership,
            TraceSpan segmentSpan, TraceSpan prefillSpan, TraceSpan decodeSpan) {
        this.prefillWorker = Objects.requireNonNull(prefillWorker, "prefillWorker");
        this.decodeWorker = Objects.requireNonNull(decodeWorker, "decodeWorker");
        this.segment = segment;
        this.number = number;
        this.ownership = Objects.requireNonNull(ownership, "ownership");
        this.segmentSpan = Objects.requireNonNull(segmentSpan, "segmentSpan");
        this.prefillSpan = Objects.requireNonNull(prefillSpan, "prefillSpan");
        this.decodeSpan = Objects.requireNonNull(decodeSpan, "decodeSpan");
    }

    /** Sends both calls; their callbacks go to {@code owner}'s hooks. */
    void send(Upstream upstream, UpstreamRequest prefill, UpstreamRequest decode, PdDispatch owner) {
        Upstream.Call prefillCall = upstream.send(prefill, new PrefillListener(owner));
        boolean abortPrefill;
        synchronized (this) {
            toPrefill = prefillCall;
            abortPrefill = state.phase().abortsPrefill && !state.prefillEnded();
        }
        if (abortPrefill) {
            prefillCall.abort(new IOException("PD attempt abandoned")); // abandoned before the call existed
        }
        Upstream.Call decodeCall = upstream.send(decode, new DecodeListener(owner));
        boolean abortDecode;
        synchronized (this) {
            toDecode = decodeCall;
            abortDecode = state.phase().abortsDecode && !state.decodeEnded();
        }
        if (abortDecode) {
            decodeCall.abort(new IOException("PD attempt abandoned"));
        }
    }

    /**
     * Moves the attempt on {@code event}, then aborts the calls the step says to abort, outside the lock.
     * Throws {@link IllegalStateException} for an event that cannot happen in the current state.
     */
    Transition fire(Event event) {
        Transition step;
        Upstream.Call abortPrefill = null;
        Upstream.Call abortDecode = null;
        synchronized (this) {
            step = state.on(event);
            state = step.to();
            if (step.abortsPrefill()) {
                abortPrefill = toPrefill;
            }
            if (step.abortsDecode()) {
                abortDecode = toDecode;
            }
        }
        if (abortDecode != null) {
            abortDecode.abort(new IOException(event == Event.CLIENT_LEFT ? "client went away" : "PD attempt abandoned"));
        }
        if (abortPrefill != null) {
            abortPrefill.abort(new IOException("PD attempt abandoned"));
        }
        return step;
    }

    synchronized PdAttemptState state() {
        return state;
    }

    DecodeHead decodeHead() {
        return decodeHead;
    }

    byte[] decodeBody() {
        return decodeBuffer.toByteArray();
    }

    void bufferDecode(ByteBuffer chunk) {
        int length = chunk.remaining();
        if (decodeBuffer.size() + (long) length <= MAX_BUFFERED_BYTES) {
            byte[] bytes = new byte[length];
            chunk.get(bytes);
            decodeBuffer.write(bytes, 0, length);
        }
    }

    /** The prefill answer, buffered whole. */
    private final class PrefillListener implements Upstream.Listener {
        private final PdDispatch owner;
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private String contentType;
        private String retryAfter;

        PrefillListener(PdDispatch owner) {
            this.owner = owner;
        }

        @Override
        public void onHeaders(int status, Function<String, String> headers) {
            ownership.onStatus(status);
            contentType = headers.apply("Content-Type");
            retryAfter = headers.apply("Retry-After");
        }

        @Override
        public void onContent(ByteBuffer chunk, Completion done) {
            int length = chunk.remaining();
            if (body.size() + (long) length <= MAX_BUFFERED_BYTES) {
                byte[] bytes = new byte[length];
                chunk.get(bytes);
                body.write(bytes, 0, length);
            }
            done.succeeded();
        }

        @Override
        public void onComplete(int status, Throwable failure) {
            Traces.endUpstream(prefillSpan, status, failure != null ? Failures.classify(failure, status > 0).name().toLowerCase()
                    : status >= 200 && status < 300 ? null : "status_" + status);
            owner.onPrefillComplete(PdAttempt.this, status, failure, body.toByteArray(), contentType, retryAfter);
        }
    }

    /** The decode answer, relayed through the owner's output stitching. */
    private final class DecodeListener implements Upstream.Listener {
        private final PdDispatch owner;

        DecodeListener(PdDispatch owner) {
            this.owner = owner;
        }

        @Override
        public void onHeaders(int status, Function<String, String> headers) {
            decodeHead = new DecodeHead(status, headers.apply("Content-Type"), headers.apply("Retry-After"));
        }

        @Override
        public void onContent(ByteBuffer chunk, Completion done) {
            owner.onDecodeContent(PdAttempt.this, chunk, done);
        }

        @Override
        public void onComplete(int status, Throwable failure) {
            Traces.endUpstream(decodeSpan, status, failure != null ? Failures.classify(failure, status > 0).name().toLowerCase()
                    : status == 200 ? null : "status_" + status);
            segmentSpan.end();
            owner.onDecodeComplete(PdAttempt.this, failure);
        }
    }
}
