package io.kvroute.router.dispatch;

import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.util.Objects;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Function;

/**
 * One segment attempt on one pair: a prefill call (its answer buffered, bounded) and a decode call
 * (streamed through {@link PdDispatch}). It only carries the two calls' state and forwards their
 * callbacks to the named hooks of its {@link PdDispatch}; decisions are made there.
 *
 * <p>Threading: each call's callbacks are serial; {@link #abandon} may come from any thread.
 */
final class PdAttempt {

    /** Bounds each buffered answer (prefill body, a decode error or non-streamed body). */
    static final int MAX_BUFFERED_BYTES = 64 << 20;

    final Worker prefillWorker;
    final Worker decodeWorker;
    final int segment;
    /** Records the prefill decision's prompt ownership when the prefill worker answers 2xx. */
    private final OwnershipOnAccept ownership;
    volatile Upstream.Call toPrefill;
    volatile Upstream.Call toDecode;
    volatile boolean abandoned;
    private volatile boolean prefillAbortRequested;
    /** Set before the router itself aborts the prefill call: that failure is not the worker's. */
    volatile boolean prefillAbortedByRouter;
    volatile boolean decodeDone;
    /** True once this attempt's output reached the client. */
    volatile boolean streamedAny;
    volatile int decodeStatus;
    volatile String decodeRetryAfter;
    volatile String decodeContentType;
    final ByteArrayOutputStream decodeBuffer = new ByteArrayOutputStream(); // touched by the decode callbacks only
    volatile TraceSpan segmentSpan = TraceSpan.NOOP;
    volatile TraceSpan prefillSpan = TraceSpan.NOOP;
    volatile TraceSpan decodeSpan = TraceSpan.NOOP;

    PdAttempt(Worker prefillWorker, Worker decodeWorker, int segment, OwnershipOnAccept ownership) {
        this.ownership = Objects.requireNonNull(ownership, "ownership");
        this.prefillWorker = prefillWorker;
        this.decodeWorker = decodeWorker;
        this.segment = segment;
    }

    void send(Upstream upstream, UpstreamRequest prefill, UpstreamRequest decode, PdDispatch owner) {
        toPrefill = upstream.send(prefill, new PrefillListener(owner));
        if (prefillAbortRequested) {
            toPrefill.abort(new IOException("PD attempt abandoned"));
        }
        toDecode = upstream.send(decode, new DecodeListener(owner));
        if (abandoned) {
            toDecode.abort(new IOException("PD attempt abandoned")); // abandoned before the call existed
        }
    }

    /** Stops the attempt: the decode call always, the prefill call only when asked (its KV transfer may matter). */
    void abandon(boolean abortPrefill) {
        abandoned = true;
        abortDecode(new IOException("PD attempt abandoned"));
        if (abortPrefill) {
            prefillAbortedByRouter = true;
            prefillAbortRequested = true;
            Upstream.Call call = toPrefill;
            if (call != null) {
                call.abort(new IOException("PD attempt abandoned"));
            }
        }
    }

    void abortDecode(Throwable cause) {
        Upstream.Call call = toDecode;
        if (call != null) {
            call.abort(cause);
        }
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
            decodeStatus = status;
            decodeRetryAfter = headers.apply("Retry-After");
            decodeContentType = headers.apply("Content-Type");
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
