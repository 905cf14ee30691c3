package io.kvroute.router.http;

import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.nio.ByteBuffer;
import java.nio.channels.UnresolvedAddressException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * Relays one client request to one worker and the worker's answer back, chunk by chunk.
 *
 * <p>Backpressure follows Jetty's ProxyHandler: each upstream chunk is retained, written to the
 * client, and only when that write completes is the next upstream chunk demanded. A failed client
 * write (the client went away) aborts the upstream request, and no error body is attempted on a
 * gone client. Failures before the first byte become OpenAI-style 502/504 errors; failures after
 * it end an SSE stream with an error event, or abort a non-streaming body so the client sees a
 * truncated response rather than a silently short 200.
 *
 * <p>Threading: callbacks arrive on Jetty client and server threads; the only shared state is the
 * two atomic flags, and {@link Outcome#onDone} runs exactly once.
 */
final class ProxyExchange {

    /** How one attempt ended, reported exactly once. */
    interface Outcome {
        void onDone(Attempt attempt);
    }

    /** What happened to the client response. */
    enum Kind {
        /** The client response was completed (relayed, or an error was written): terminal. */
        RELAYED,
        /** Nothing reached the client and the failure may be retried elsewhere. */
        RETRYABLE,
        /** The client went away; nothing more can be sent. */
        CLIENT_GONE
    }

    /**
     * @param kind what happened to the client response
     * @param status the worker's or the written status (0 when none)
     * @param failureKind null on success; connect, timeout, reset, busy, status_5xx, client_gone, shutdown
     * @param firstByteNanos ingress-relative time of the first relayed byte, 0 if none
     */
    record Attempt(Kind kind, int status, String failureKind, long firstByteNanos) {}

    /** Worker statuses worth another worker: busy, bad gateway, unavailable, gateway timeout. */
    static boolean isRetryableStatus(int status) {
        return status == 429 || status == 502 || status == 503 || status == 504;
    }

    private final HttpClient client;
    private final Worker worker;
    private final String path;
    private final byte[] body;
    private final boolean streaming;
    private final long timeoutMillis;
    private final long idleTimeoutMillis;
    private final boolean finalAttempt;
    private final Request clientRequest;
    private final Response clientResponse;
    private final Callback clientCallback;
    private final Outcome outcome;
    private final long startNanos;

    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicBoolean clientGone = new AtomicBoolean();
    private volatile boolean firstByteWritten;
    private volatile long firstByteNanos;
    private volatile boolean discarding;
    private volatile String abortReason;
    private volatile org.eclipse.jetty.client.Request proxyToWorker;
    private TraceSpan trace = TraceSpan.NOOP;

    ProxyExchange(HttpClient client, Worker worker, String path, byte[] body, boolean streaming, long timeoutMillis,
            long idleTimeoutMillis, boolean finalAttempt, long startNanos,
            Request clientRequest, Response clientResponse, Callback clientCallback, Outcome outcome) {
        this.client = Objects.requireNonNull(client, "client");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.path = Objects.requireNonNull(path, "path");
        this.body = Objects.requireNonNull(body, "body");
        this.streaming = streaming;
        this.timeoutMillis = timeoutMillis;
        this.idleTimeoutMillis = idleTimeoutMillis;
        this.finalAttempt = finalAttempt;
        this.startNanos = startNanos;
        this.clientRequest = clientRequest;
        this.clientResponse = clientResponse;
        this.clientCallback = clientCallback;
        this.outcome = outcome;
    }

    /** True once any byte reached the client: from then on the request can never be retried. */
    boolean firstByteWritten() {
        return firstByteWritten;
    }

    /** Aborts the upstream request (client gone, router shutting down); the outcome still fires. */
    void abort(String reason, Throwable cause) {
        abortReason = reason;
        org.eclipse.jetty.client.Request upstream = proxyToWorker;
        if (upstream != null) {
            upstream.abort(cause);
        }
    }

    /** The attempt's span: its trace context goes to the worker as {@code traceparent}. Call before {@link #start}. */
    void traced(TraceSpan span) {
        this.trace = span;
    }

    void markClientGone() {
        clientGone.set(true);
    }

    void start() {
        org.eclipse.jetty.client.Request proxyToWorker = client.newRequest(worker.url() + path)
                .method(HttpMethod.POST)
                .headers(h -> {
                    h.put(HttpHeader.ACCEPT, streaming ? "text/event-stream" : "application/json");
                    trace.inject(h::put);
                })
                .body(new BytesRequestContent("application/json", body))
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                // the idle timeout is for streams: a non-streaming answer is legitimately silent until
                // the whole generation is done, so only the request timeout bounds it
                .idleTimeout(streaming ? idleTimeoutMillis : timeoutMillis, TimeUnit.MILLISECONDS);
        this.proxyToWorker = proxyToWorker;

        proxyToWorker.onResponseHeaders(workerResponse -> {
            if (!finalAttempt && isRetryableStatus(workerResponse.getStatus())) {
                discarding = true;
                return;
            }
            clientResponse.setStatus(workerResponse.getStatus());
            String contentType = workerResponse.getHeaders().get(HttpHeader.CONTENT_TYPE);
            if (contentType != null) {
                clientResponse.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
            }
            String retryAfter = workerResponse.getHeaders().get(HttpHeader.RETRY_AFTER);
            if (retryAfter != null) {
                clientResponse.getHeaders().put(HttpHeader.RETRY_AFTER, retryAfter);
            }
            if (streaming) {
                clientResponse.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
            }
            clientResponse.getHeaders().put(RouterHandler.WORKER_HEADER, worker.url());
        });

        proxyToWorker.onResponseContentAsync((workerResponse, chunk, demander) -> relay(proxyToWorker, chunk, demander));

        proxyToWorker.send(this::onUpstreamComplete);
    }

    private void relay(org.eclipse.jetty.client.Request proxyToWorker, Content.Chunk chunk, Runnable demander) {
        ByteBuffer bytes = chunk.getByteBuffer();
        if (discarding || !bytes.hasRemaining()) {
            demander.run();
            return;
        }
        if (!firstByteWritten) {
            firstByteWritten = true;
            firstByteNanos = System.nanoTime() - startNanos;
            RouteFacts.of(clientRequest).firstByte(firstByteNanos);
        }
        chunk.retain();
        clientResponse.write(false, bytes, Callback.from(() -> {
            chunk.release();
            demander.run();
        }, failure -> {
            chunk.release();
            clientGone.set(true);
            proxyToWorker.abort(failure);
        }));
    }

    private void onUpstreamComplete(Result result) {
        if (!done.compareAndSet(false, true)) {
            return;
        }
        if (discarding) {
            int status = result.getResponse().getStatus();
            outcome.onDone(new Attempt(Kind.RETRYABLE, status, status == 429 ? "busy" : "status_" + status, 0));
            return;
        }
        if (result.isSucceeded()) {
            int status = result.getResponse().getStatus();
            clientResponse.write(true, BufferUtil.EMPTY_BUFFER, clientCallback);
            outcome.onDone(new Attempt(Kind.RELAYED, status, status >= 500 ? "status_" + status : null, firstByteNanos));
            return;
        }
        Throwable failure = result.getFailure();
        if (clientGone.get()) {
            clientCallback.failed(failure);
            outcome.onDone(new Attempt(Kind.CLIENT_GONE, 0, "client_gone", firstByteNanos));
            return;
        }
        String shutdown = abortReason;
        String kind = shutdown != null ? "shutdown"
                : failureKind(failure, result.getResponse() != null && result.getResponse().getStatus() > 0);
        if (!firstByteWritten && !clientResponse.isCommitted()) {
            if (!finalAttempt && shutdown == null) {
                outcome.onDone(new Attempt(Kind.RETRYABLE, 0, kind, 0));
                return;
            }
            int status = shutdown != null ? 503 : kind.equals("timeout") ? 504 : 502;
            String message = shutdown != null ? shutdown
                    : kind.equals("timeout")
                            ? "worker " + worker.url() + " did not answer within the request timeout (" + describe(failure) + ")"
                            : kind.equals("connect")
                                    ? "worker " + worker.url() + " is unreachable"
                                    : "worker " + worker.url() + " failed: " + describe(failure);
            clientResponse.getHeaders().remove(HttpHeader.CACHE_CONTROL);
            clientResponse.getHeaders().remove(HttpHeader.CONTENT_TYPE);
            OpenAiErrors.send(clientResponse, clientCallback, status, OpenAiErrors.typeFor(status), message);
            outcome.onDone(new Attempt(Kind.RELAYED, status, kind, firstByteNanos));
            return;
        }
        int status = shutdown != null ? 503 : kind.equals("timeout") ? 504 : 502;
        if (streaming) {
            String message = shutdown != null ? shutdown
                    : "worker " + worker.url() + " failed mid-stream: " + describe(failure);
            clientResponse.write(true, OpenAiErrors.sseEvent(status, OpenAiErrors.typeFor(status), message), clientCallback);
        } else {
            clientCallback.failed(failure);
        }
        outcome.onDone(new Attempt(Kind.RELAYED, status, kind, firstByteNanos));
    }

    /** Classifies an upstream failure for metrics, health and the error status. */
    static String failureKind(Throwable failure, boolean responseStarted) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException) {
                return "timeout";
            }
            if (!responseStarted && (t instanceof ConnectException || t instanceof NoRouteToHostException
                    || t instanceof UnresolvedAddressException)) {
                return "connect";
            }
        }
        return "reset";
    }

    private static String describe(Throwable failure) {
        String message = failure.getMessage();
        return failure.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
