package io.kvroute.router.http;

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

    /** How one exchange ended, reported once. */
    interface Outcome {
        /**
         * @param status the status the client saw (0 when the client went away first)
         * @param failureKind null on success; connect, timeout, reset, client_gone otherwise
         */
        void onDone(int status, String failureKind, long firstByteNanos);
    }

    private final HttpClient client;
    private final Worker worker;
    private final String path;
    private final byte[] body;
    private final boolean streaming;
    private final long timeoutMillis;
    private final Request clientRequest;
    private final Response clientResponse;
    private final Callback clientCallback;
    private final Outcome outcome;
    private final long startNanos = System.nanoTime();

    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicBoolean clientGone = new AtomicBoolean();
    private volatile boolean firstByteWritten;
    private volatile long firstByteNanos;

    ProxyExchange(HttpClient client, Worker worker, String path, byte[] body, boolean streaming, long timeoutMillis,
            Request clientRequest, Response clientResponse, Callback clientCallback, Outcome outcome) {
        this.client = Objects.requireNonNull(client, "client");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.path = Objects.requireNonNull(path, "path");
        this.body = Objects.requireNonNull(body, "body");
        this.streaming = streaming;
        this.timeoutMillis = timeoutMillis;
        this.clientRequest = clientRequest;
        this.clientResponse = clientResponse;
        this.clientCallback = clientCallback;
        this.outcome = outcome;
    }

    void start() {
        org.eclipse.jetty.client.Request proxyToWorker = client.newRequest(worker.url() + path)
                .method(HttpMethod.POST)
                .headers(h -> h.put(HttpHeader.ACCEPT, streaming ? "text/event-stream" : "application/json"))
                .body(new BytesRequestContent("application/json", body))
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS);

        proxyToWorker.onResponseHeaders(workerResponse -> {
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

        clientRequest.addFailureListener(failure -> {
            clientGone.set(true);
            proxyToWorker.abort(failure);
        });

        proxyToWorker.send(this::onUpstreamComplete);
    }

    private void relay(org.eclipse.jetty.client.Request proxyToWorker, Content.Chunk chunk, Runnable demander) {
        ByteBuffer bytes = chunk.getByteBuffer();
        if (!bytes.hasRemaining()) {
            demander.run();
            return;
        }
        if (!firstByteWritten) {
            firstByteWritten = true;
            firstByteNanos = System.nanoTime() - startNanos;
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
        if (result.isSucceeded()) {
            int status = result.getResponse().getStatus();
            clientResponse.write(true, BufferUtil.EMPTY_BUFFER, clientCallback);
            outcome.onDone(status, null, firstByteNanos);
            return;
        }
        Throwable failure = result.getFailure();
        if (clientGone.get()) {
            clientCallback.failed(failure);
            outcome.onDone(0, "client_gone", firstByteNanos);
            return;
        }
        String kind = failureKind(failure, result.getResponse() != null && result.getResponse().getStatus() > 0);
        if (!firstByteWritten && !clientResponse.isCommitted()) {
            int status = kind.equals("timeout") ? 504 : 502;
            String message = kind.equals("timeout")
                    ? "worker " + worker.url() + " did not answer within " + timeoutMillis + " ms"
                    : kind.equals("connect")
                            ? "worker " + worker.url() + " is unreachable"
                            : "worker " + worker.url() + " failed: " + describe(failure);
            clientResponse.getHeaders().remove(HttpHeader.CACHE_CONTROL);
            OpenAiErrors.send(clientResponse, clientCallback, status, OpenAiErrors.typeFor(status), message);
            outcome.onDone(status, kind, firstByteNanos);
            return;
        }
        int status = kind.equals("timeout") ? 504 : 502;
        if (streaming) {
            String message = "worker " + worker.url() + " failed mid-stream: " + describe(failure);
            clientResponse.write(true, OpenAiErrors.sseEvent(status, OpenAiErrors.typeFor(status), message), clientCallback);
        } else {
            clientCallback.failed(failure);
        }
        outcome.onDone(status, kind, firstByteNanos);
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
