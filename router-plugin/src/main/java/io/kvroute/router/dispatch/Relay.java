package io.kvroute.router.dispatch;

import io.kvroute.router.worker.Worker;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Relays one attempt's upstream answer to the client chunk by chunk (Jetty's {@code ProxyHandler}:
 * one relay, named hooks). Backpressure: each upstream chunk is written to the client and only when
 * that write completes is the next chunk demanded; a failed client write aborts the upstream call.
 *
 * <p>Hooks: {@link #onHeaders} either discards a retryable answer (the {@link RetryRule} says it
 * may be retried) or copies the worker's status and headers into the pending head;
 * {@link #onContent} relays; {@link #onComplete} reports one {@link Result} to the dispatch, which
 * asks the rule for the next step. The relay never ends the client response itself.
 *
 * <p>Threading: upstream callbacks are serial; {@link #abort} may come from any thread.
 */
final class Relay implements Upstream.Listener {

    /**
     * How the attempt ended.
     *
     * @param status the worker's status, 0 when none arrived
     * @param failure null on a success the client may see as-is
     * @param relayed true when the worker's answer went (or goes) to the client as-is
     * @param cause the transport failure, or null
     */
    record Result(int status, Failure failure, boolean relayed, Throwable cause) {}

    private final Exchange client;
    private final Worker worker;
    private final RetryRule rule;
    private final int attempt;
    private final Consumer<Result> onDone;
    private final OwnershipOnAccept ownership;
    /** A 400 is held, not relayed: the attempt carried the router's engine priority (see {@link EnginePriority}). */
    private final boolean holdsBadRequest;
    private final AtomicBoolean done = new AtomicBoolean();

    private volatile Upstream.Call proxyToWorker;
    private volatile boolean discarding;
    private volatile boolean headersSeen;
    private volatile String abortReason;

    Relay(Exchange client, Worker worker, RetryRule rule, int attempt, OwnershipOnAccept ownership,
            boolean holdsBadRequest, Consumer<Result> onDone) {
        this.holdsBadRequest = holdsBadRequest;
        this.ownership = Objects.requireNonNull(ownership, "ownership");
        this.client = Objects.requireNonNull(client, "client");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.rule = Objects.requireNonNull(rule, "rule");
        this.attempt = attempt;
        this.onDone = Objects.requireNonNull(onDone, "onDone");
    }

    void start(Upstream upstream, UpstreamRequest request) {
        proxyToWorker = upstream.send(request, this);
    }

    /** Aborts the upstream call (client gone: reason null; shutdown: the reason); the result still comes. */
    void abort(String reason, Throwable cause) {
        if (reason != null) {
            abortReason = reason;
        }
        Upstream.Call call = proxyToWorker;
        if (call != null) {
            call.abort(cause);
        }
    }

    @Override
    public void onHeaders(int status, Function<String, String> headers) {
        headersSeen = true;
        ownership.onStatus(status);
        if (rule.discardsStatus(status, attempt) || (holdsBadRequest && status == 400)) {
            discarding = true;
            return;
        }
        client.status(status);
        client.header("Content-Type", headers.apply("Content-Type"));
        client.header("Retry-After", headers.apply("Retry-After"));
        // The body goes out byte for byte, so the worker's length is the client's: the answer leaves as one
        // sized write instead of chunked framing plus a terminal chunk (a second write per request; Jetty's
        // ProxyHandler forwards it the same way). A worker that sends fewer or more bytes fails the exchange
        // (Jetty's client checks the length), and a failed relay clears the head before any error is written.
        client.header("Content-Length", headers.apply("Content-Length"));
        if (client.streaming()) {
            client.header("Cache-Control", "no-cache");
        }
        client.header(Headers.WORKER, worker.url());
    }

    @Override
    public void onContent(ByteBuffer chunk, Completion done) {
        if (discarding || !chunk.hasRemaining()) {
            done.succeeded();
            return;
        }
        client.write(chunk, done);
    }

    @Override
    public void onComplete(int status, Throwable failure) {
        if (!done.compareAndSet(false, true)) {
            return;
        }
        if (discarding) {
            onDone.accept(new Result(status, Failure.status(status, Failure.Hop.WORKER), false, null));
            return;
        }
        if (failure == null) {
            Failure statusFailure = status >= 500 || status == 429 ? Failure.status(status, Failure.Hop.WORKER) : null;
            onDone.accept(new Result(status, statusFailure, true, null));
            return;
        }
        FailureKind kind = abortReason != null ? FailureKind.SHUTDOWN
                : Failures.classify(failure, headersSeen && status > 0);
        onDone.accept(new Result(status, new Failure(kind, 0, Failure.Hop.WORKER), false, failure));
    }
}
