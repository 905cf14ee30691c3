package io.kvroute.router.dispatch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One client request's response, over any {@link ClientSink}. It owns the response's state machine:
 * pending head (status and headers not yet sent), begun (first byte out), and terminal. The
 * terminal transition happens exactly once by construction: every ending ({@link #complete},
 * {@link #relay}, {@link #fail}, {@link #clientGone}) goes through one compare-and-set, and only the
 * winner touches the sink, runs the terminal action and reports the one {@link RequestOutcome}.
 *
 * <p>Errors: before the first byte, a failure becomes an OpenAI JSON error with its status (the
 * pending head is dropped); after it, a stream ends with an SSE error event and a plain body is
 * aborted so the client sees a truncated response rather than a silently short 200.
 *
 * <p>Threading: the pending head is guarded by this object; writes come from one upstream call at
 * a time; terminal methods may race from any thread (client gone, upstream completion, drain).
 */
public final class Exchange {

    private final ClientSink sink;
    private final String path;
    private final boolean streaming;
    private final long startNanos;
    private final DispatchClock clock;
    private final OutcomeListener outcomes;
    private final Runnable onTerminal;
    private final AtomicBoolean terminal = new AtomicBoolean();
    private final Map<String, String> head = new LinkedHashMap<>(); // guarded by this

    private int status = 200; // guarded by this
    private volatile boolean begun;
    private volatile boolean gone;
    private volatile long firstByteNanos;
    private volatile int attempts;
    private volatile int segments;
    private volatile String workerUrl;
    private volatile String decodeUrl;

    public Exchange(ClientSink sink, String path, boolean streaming, long startNanos, DispatchClock clock,
            OutcomeListener outcomes, Runnable onTerminal) {
        this.sink = Objects.requireNonNull(sink, "sink");
        this.path = Objects.requireNonNull(path, "path");
        this.streaming = streaming;
        this.startNanos = startNanos;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.outcomes = Objects.requireNonNull(outcomes, "outcomes");
        this.onTerminal = Objects.requireNonNull(onTerminal, "onTerminal");
    }

    public String path() {
        return path;
    }

    public boolean streaming() {
        return streaming;
    }

    public long startNanos() {
        return startNanos;
    }

    /** True once any byte reached the client (or its head was sent): nothing may be retried from then on. */
    public boolean begun() {
        return begun;
    }

    /** True once the client went away (a write failed or the transport said so). */
    public boolean gone() {
        return gone;
    }

    public boolean terminal() {
        return terminal.get();
    }

    /** Registers the transport's client-gone signal; {@code listener} runs at most once per signal. */
    public void onGone(Runnable listener) {
        sink.onGone(failure -> {
            gone = true;
            listener.run();
        });
    }

    /** Notes what the outcome should name: attempts so far and the workers of the last attempt. */
    public void note(int attempts, int segments, String workerUrl, String decodeUrl) {
        this.attempts = attempts;
        this.segments = segments;
        this.workerUrl = workerUrl;
        this.decodeUrl = decodeUrl;
    }

    /** Sets the pending status; ignored once the head was sent. */
    public synchronized void status(int status) {
        if (!begun) {
            this.status = status;
        }
    }

    /** Sets a pending header; ignored once the head was sent. */
    public synchronized void header(String name, String value) {
        if (!begun && value != null) {
            head.put(name, value);
        }
    }

    /** Drops the pending head (a discarded or retried attempt set it). */
    public synchronized void resetHead() {
        if (!begun) {
            head.clear();
            status = 200;
        }
    }

    /** Writes one chunk (sending the head first); {@code done} fails if the client is gone or the exchange ended. */
    public void write(ByteBuffer chunk, Completion done) {
        if (terminal.get()) {
            done.failed(new IOException("the client response already ended"));
            return;
        }
        beginIfNeeded();
        sink.write(chunk, Completion.of(done::succeeded, failure -> {
            gone = true;
            done.failed(failure);
        }));
    }

    /** Ends the response successfully with {@code last}; the head's status is what the client got. */
    public boolean complete(ByteBuffer last, Failure failure) {
        if (!terminal.compareAndSet(false, true)) {
            return false;
        }
        int sent = beginIfNeeded();
        sink.end(last);
        report(sent, failure);
        return true;
    }

    /** Relays a whole worker answer (status, content type, body) when nothing was sent yet, else fails. */
    public boolean relay(int status, String contentType, byte[] body, Failure failure) {
        if (begun) {
            return fail(status, failure, "worker answered " + status + " after output was already streamed");
        }
        status(status);
        header("Content-Type", contentType == null ? "application/json" : contentType);
        return complete(ByteBuffer.wrap(body == null ? new byte[0] : body), failure);
    }

    /**
     * Ends the request with an error: a JSON error with {@code status} before the first byte, an
     * SSE error event after it on a stream, an abort after it otherwise.
     */
    public boolean fail(int status, Failure failure, String message) {
        if (!terminal.compareAndSet(false, true)) {
            return false;
        }
        String type = ErrorBodies.typeFor(status);
        int reported = status;
        if (errorHead(status)) {
            sink.end(ByteBuffer.wrap(ErrorBodies.json(status, type, message)));
        } else if (streaming) {
            sink.end(ByteBuffer.wrap(ErrorBodies.sseEvent(status, type, message)));
        } else {
            sink.abort(new IOException(message));
        }
        report(reported, failure);
        return true;
    }

    /** The client went away: end without writing anything. */
    public boolean clientGone(Throwable cause) {
        if (!terminal.compareAndSet(false, true)) {
            return false;
        }
        gone = true;
        sink.abort(cause == null ? new IOException("client went away") : cause);
        report(0, Failure.of(FailureKind.CLIENT_GONE));
        return true;
    }

    /** Replaces a pending head by a JSON error head; false when the head was already sent. */
    private synchronized boolean errorHead(int status) {
        if (begun) {
            return false;
        }
        String retryAfter = head.get("Retry-After");
        head.clear();
        if (retryAfter != null && status == 429) {
            head.put("Retry-After", retryAfter);
        }
        head.put("Content-Type", "application/json");
        this.status = status;
        beginIfNeeded();
        return true;
    }

    /** Sends the head once; setting headers on the sink does no I/O, so holding the lock is fine. */
    private synchronized int beginIfNeeded() {
        int sent = status;
        if (!begun) {
            begun = true;
            firstByteNanos = clock.nanoTime() - startNanos;
            sink.begin(sent, new LinkedHashMap<>(head));
        }
        return sent;
    }

    private void report(int sentStatus, Failure failure) {
        try {
            onTerminal.run();
        } finally {
            outcomes.onOutcome(new RequestOutcome(path, sentStatus, failure, clock.nanoTime() - startNanos,
                    firstByteNanos, attempts, segments, workerUrl, decodeUrl));
        }
    }
}
