package io.kvroute.router.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.pd.BootstrapInjector;
import io.kvroute.router.pd.Continuation;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One client request through a prefill/decode pair (SGLang's PD router, LightLLM's PD master).
 *
 * <p>The prefill worker comes from the prefill policy, the decode worker from the decode policy.
 * The same body, carrying the prefill worker's bootstrap rendezvous, goes to both concurrently; the
 * client sees the decode response (streamed), with {@code x-kvroute-decode-url}. The prefill call
 * runs to completion even if the client disconnects (so the KV transfer finishes); only the decode
 * side is aborted then. A prefill 4xx is relayed verbatim; any other failure of either side before
 * the first byte is a 502/504 (or a retry on a new pair while attempts remain), after it an SSE
 * error event; the other side of a failed attempt is aborted.
 *
 * <p>Continuations: when the decode node ends a segment with the capacity marker, the rest is
 * re-dispatched to the same pair as a new segment ({@link Continuation}); {@link PdOutput} stitches
 * the segments into one stream with summed usage.
 *
 * <p>Busy: a 429 {@code server_busy} from either node before any output of the attempt reached
 * the client is retried (pair reselected for the first segment, the same pair for a continuation)
 * until {@code --pd-busy-retry-timeout-secs} expires; with the window at 0 (the default) the 429
 * goes to the client with its {@code Retry-After}. Output already streamed is never replayed.
 *
 * <p>Threading: worker callbacks arrive on HTTP client threads; state changes are serialized on
 * this object and client writes are issued after leaving the lock.
 */
final class PdDispatch implements Abortable {

    static final String DECODE_URL_HEADER = "x-kvroute-decode-url";
    private static final int MAX_BUFFERED_BYTES = 64 << 20;
    private static final long BUSY_BACKOFF_NANOS = 50_000_000L;

    private final RouterContext ctx;
    private final Endpoint endpoint;
    private final ObjectNode body;
    private final boolean streaming;
    private final long inputTokens;
    private final int[] tokenIds;
    private final io.kvroute.router.load.EngineLoadSnapshot loads;
    private final RouteHints hints;
    private final Supplier<List<Worker>> prefillPool;
    private final Supplier<List<Worker>> decodePool;
    private final RoutingPolicy prefillPolicy;
    private final RoutingPolicy decodePolicy;
    private final Request clientRequest;
    private final Response clientResponse;
    private final Callback clientCallback;
    private final long startNanos;
    private final PdOutput output;
    private final int requestedTokens;
    private final long busyDeadlineNanos;
    private final AtomicBoolean finished = new AtomicBoolean();

    private Worker prefill; // guarded by this
    private Worker decode; // guarded by this
    private int segment; // guarded by this
    private int attempts; // guarded by this
    private boolean responseStarted; // guarded by this
    private Attempt current; // guarded by this
    private volatile boolean clientGone;
    private volatile String abortReason;
    private int continuations;

    PdDispatch(RouterContext ctx, Endpoint endpoint, ObjectNode body, long inputTokens, int[] tokenIds,
            io.kvroute.router.load.EngineLoadSnapshot loads, RouteHints hints,
            Supplier<List<Worker>> prefillPool, Supplier<List<Worker>> decodePool, RoutingPolicy prefillPolicy,
            RoutingPolicy decodePolicy, Request clientRequest, Response clientResponse, Callback clientCallback,
            long startNanos) {
        this.ctx = ctx;
        this.endpoint = endpoint;
        this.body = body;
        this.streaming = body.path("stream").asBoolean(false);
        this.inputTokens = inputTokens;
        this.tokenIds = tokenIds;
        this.loads = loads;
        this.hints = hints;
        this.prefillPool = prefillPool;
        this.decodePool = decodePool;
        this.prefillPolicy = prefillPolicy;
        this.decodePolicy = decodePolicy;
        this.clientRequest = clientRequest;
        this.clientResponse = clientResponse;
        this.clientCallback = clientCallback;
        this.startNanos = startNanos;
        boolean wantsUsage = body.path("stream_options").path("include_usage").asBoolean(false);
        this.output = new PdOutput(endpoint, wantsUsage);
        this.requestedTokens = Continuation.requestedTokens(body, endpoint.path, 128);
        if (streaming && endpoint != Endpoint.GENERATE) {
            // Segments are accounted from usage, so always ask the decode side for it.
            body.with("stream_options").put("include_usage", true);
        }
        double window = ctx.config().pdBusyRetryTimeoutSecs();
        this.busyDeadlineNanos = window > 0 ? startNanos + (long) (window * 1e9) : Long.MIN_VALUE;
    }

    /** One segment attempt on one pair: a prefill call and a decode call. */
    private final class Attempt {
        final Worker prefillWorker;
        final Worker decodeWorker;
        org.eclipse.jetty.client.Request toPrefill;
        org.eclipse.jetty.client.Request toDecode;
        volatile boolean abandoned;
        int decodeStatus;
        String decodeRetryAfter;
        String decodeContentType;
        final ByteArrayOutputStream decodeBuffer = new ByteArrayOutputStream();
        boolean decodeDone;
        TraceSpan segmentSpan = TraceSpan.NOOP;
        TraceSpan prefillSpan = TraceSpan.NOOP;
        TraceSpan decodeSpan = TraceSpan.NOOP;

        Attempt(Worker prefillWorker, Worker decodeWorker) {
            this.prefillWorker = prefillWorker;
            this.decodeWorker = decodeWorker;
        }

        void abandon(boolean abortPrefill) {
            abandoned = true;
            if (toDecode != null) {
                toDecode.abort(new java.io.IOException("PD attempt abandoned"));
            }
            if (abortPrefill && toPrefill != null) {
                toPrefill.abort(new java.io.IOException("PD attempt abandoned"));
            }
        }
    }

    void start() {
        ctx.active().add(this);
        clientRequest.addFailureListener(failure -> {
            clientGone = true;
            Attempt attempt;
            synchronized (this) {
                attempt = current;
            }
            if (attempt != null && attempt.toDecode != null) {
                attempt.toDecode.abort(failure); // the prefill keeps going so the KV transfer completes
            }
        });
        if (!choosePair()) {
            OpenAiErrors.send(clientResponse, clientCallback, 503, "service_unavailable", "no usable prefill/decode pair");
            finish(503, "no_worker");
            return;
        }
        launch();
    }

    @Override
    public void abort(String reason) {
        abortReason = reason;
        Attempt attempt;
        synchronized (this) {
            attempt = current;
        }
        if (attempt != null) {
            attempt.abandon(true);
            fail(attempt, 503, "shutdown", reason);
        }
    }

    private synchronized boolean choosePair() {
        List<Worker> prefills = prefillPool.get();
        List<Worker> decodes = decodePool.get();
        if (prefills.isEmpty() || decodes.isEmpty()) {
            return false;
        }
        RoutingPolicy prefillChooser = hints.sessionKey() != null ? ctx.prefillSessionPolicy() : prefillPolicy;
        RouteFacts facts = RouteFacts.of(clientRequest);
        TraceSpan selectSpan = facts.span().child("kvroute.select");
        Decision p = prefillChooser.select(new RoutingRequest(prefills, ctx.inFlight()::get, inputTokens,
                hints.sessionKey(), tokenIds, loads, hints.routingText()));
        if (p.cacheAware() != null) {
            ctx.metrics().cacheAware(hints.modelLabel(), p.cacheAware());
            ctx.onDispatched(p);
        }
        Decision d = decodePolicy.select(new RoutingRequest(decodes, ctx.inFlight()::get, inputTokens, null, null, loads));
        ctx.metrics().decision(prefillChooser.name(), p.reason().label());
        ctx.metrics().decision("decode_" + decodePolicy.name(), d.reason().label());
        ctx.metrics().pressureSource(prefillPolicy.name(), p.pressureSource());
        ctx.metrics().pressureSource("decode_" + decodePolicy.name(), d.pressureSource());
        prefill = p.worker();
        decode = d.worker();
        facts.decision(prefillChooser.name(), p.reason().label(),
                p.cacheAware() == null ? -1 : p.cacheAware().selectedMatchedTokens(), decode.url());
        facts.prefillWorker(prefill.url());
        Traces.endSelect(selectSpan, facts);
        return true;
    }

    private void launch() {
        Attempt attempt;
        byte[] bytes;
        boolean firstLaunch;
        synchronized (this) {
            attempts++;
            firstLaunch = attempts == 1 && segment == 0;
            attempt = new Attempt(prefill, decode);
            current = attempt;
            int retry = attempts - 1 - continuations;
            RouteFacts facts = RouteFacts.of(clientRequest);
            facts.segments(segment + 1);
            facts.retries(retry);
            attempt.segmentSpan = facts.span().child(segment == 0 ? "kvroute.pd.segment" : "kvroute.pd.continuation")
                    .tag("segment", segment).tag("retry", retry);
            attempt.prefillSpan = Traces.upstream(attempt.segmentSpan, "kvroute.upstream.prefill", attempt.prefillWorker, retry);
            attempt.decodeSpan = Traces.upstream(attempt.segmentSpan, "kvroute.upstream.decode", attempt.decodeWorker, retry);
            ObjectNode segmentBody = segment == 0 ? body.deepCopy()
                    : Continuation.next(body, endpoint.path, output.generatedText(),
                            Math.max(1, requestedTokens - output.generatedTokens()), segment);
            BootstrapInjector.inject(segmentBody, host(attempt.prefillWorker), attempt.prefillWorker.bootstrapPort(),
                    () -> ThreadLocalRandom.current().nextLong());
            bytes = segmentBody.toString().getBytes(StandardCharsets.UTF_8);
            output.beginSegment();
        }
        long timeoutMillis = (long) (ctx.config().requestTimeoutSecs() * 1000);
        long idleMillis = (long) (ctx.config().streamIdleTimeoutSecs() * 1000);
        ctx.inFlight().acquire(attempt.prefillWorker.id());
        ctx.inFlight().acquire(attempt.decodeWorker.id());
        long dispatchedAt = System.nanoTime();
        if (firstLaunch) {
            ctx.metrics().overhead(endpoint.path, dispatchedAt - startNanos);
        }
        ctx.loads().dispatchLog().recordDispatch(attempt.prefillWorker.id(), dispatchedAt);
        ctx.loads().dispatchLog().recordDispatch(attempt.decodeWorker.id(), dispatchedAt);

        attempt.toPrefill = ctx.client().newRequest(attempt.prefillWorker.url() + endpoint.path)
                .method(HttpMethod.POST).body(new BytesRequestContent("application/json", bytes))
                .headers(h -> attempt.prefillSpan.inject(h::put))
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS).idleTimeout(idleMillis, TimeUnit.MILLISECONDS);
        attempt.toDecode = ctx.client().newRequest(attempt.decodeWorker.url() + endpoint.path)
                .method(HttpMethod.POST).body(new BytesRequestContent("application/json", bytes))
                .headers(h -> {
                    h.put(HttpHeader.ACCEPT, streaming ? "text/event-stream" : "application/json");
                    attempt.decodeSpan.inject(h::put);
                })
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS).idleTimeout(idleMillis, TimeUnit.MILLISECONDS);
        attempt.toDecode.onResponseHeaders(r -> {
            attempt.decodeStatus = r.getStatus();
            attempt.decodeRetryAfter = r.getHeaders().get(HttpHeader.RETRY_AFTER);
            attempt.decodeContentType = r.getHeaders().get(HttpHeader.CONTENT_TYPE);
        });
        attempt.toDecode.onResponseContentAsync((r, chunk, demander) -> onDecodeContent(attempt, chunk, demander));

        attempt.toPrefill.send(new BufferingResponseListener(MAX_BUFFERED_BYTES) {
            @Override
            public void onComplete(Result result) {
                onPrefillComplete(attempt, result, getContent(), getMediaType());
            }
        });
        attempt.toDecode.send(result -> onDecodeComplete(attempt, result));
        if (clientGone) {
            attempt.toDecode.abort(new java.io.IOException("client went away"));
        }
    }

    private void onDecodeContent(Attempt attempt, Content.Chunk chunk, Runnable demander) {
        ByteBuffer buffer = chunk.getByteBuffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        if (attempt.abandoned || attempt.decodeStatus != 200 || !streaming) {
            if (attempt.decodeBuffer.size() + bytes.length <= MAX_BUFFERED_BYTES) {
                attempt.decodeBuffer.write(bytes, 0, bytes.length);
            }
            demander.run();
            return;
        }
        byte[] visible;
        synchronized (this) {
            visible = output.onStreamBytes(bytes);
            if (visible.length > 0) {
                startResponse(attempt, "text/event-stream");
            }
        }
        if (visible.length == 0) {
            demander.run();
            return;
        }
        clientResponse.write(false, ByteBuffer.wrap(visible), Callback.from(demander, failure -> {
            clientGone = true;
            attempt.toDecode.abort(failure);
        }));
    }

    private void onDecodeComplete(Attempt attempt, Result result) {
        ctx.inFlight().release(attempt.decodeWorker.id());
        Traces.endUpstream(attempt.decodeSpan, attempt.decodeStatus, result.getFailure() != null
                ? ProxyExchange.failureKind(result.getFailure(), attempt.decodeStatus > 0)
                : attempt.decodeStatus == 200 ? null : "status_" + attempt.decodeStatus);
        attempt.segmentSpan.end();
        if (attempt.abandoned) {
            return;
        }
        attempt.decodeDone = true;
        if (clientGone) {
            attempt.abandoned = true;
            clientCallback.failed(new java.io.IOException("client went away"));
            finish(0, "client_gone");
            return;
        }
        Throwable failure = result.getFailure();
        if (failure != null) {
            String kind = ProxyExchange.failureKind(failure, attempt.decodeStatus > 0);
            ctx.breakers().onFailure(attempt.decodeWorker.id());
            ctx.metrics().upstreamError(attempt.decodeWorker.url(), kind);
            attempt.abandon(true);
            if (!retryForFailure(kind)) {
                fail(attempt, kind.equals("timeout") ? 504 : 502, kind, "decode worker " + attempt.decodeWorker.url()
                        + (kind.equals("timeout") ? " timed out" : " failed: " + failure));
            }
            return;
        }
        int status = attempt.decodeStatus;
        if (status == 429) {
            attempt.abandon(true);
            busy(attempt, attempt.decodeBuffer.toByteArray(), attempt.decodeRetryAfter, attempt.decodeContentType);
            return;
        }
        if (status != 200) {
            if (status >= 500) {
                ctx.breakers().onFailure(attempt.decodeWorker.id());
            }
            attempt.abandon(true);
            if (status >= 500 && retryForFailure("status_" + status)) {
                return;
            }
            relayOrFail(attempt, status, attempt.decodeBuffer.toByteArray(), attempt.decodeContentType, "decode_" + status);
            return;
        }
        ctx.breakers().onSuccess(attempt.decodeWorker.id());
        segmentDone(attempt);
    }

    private void segmentDone(Attempt attempt) {
        byte[] last;
        boolean continueSegments;
        synchronized (this) {
            if (streaming) {
                output.endSegment();
                continueSegments = output.segmentEndedForCapacity() && output.generatedTokens() < requestedTokens;
                last = continueSegments ? null : output.streamTrailer(body.path("model").asText(null));
            } else {
                try {
                    byte[] whole = output.onWholeBody(attempt.decodeBuffer.toByteArray());
                    if (whole == null) {
                        output.endSegment();
                        continueSegments = output.generatedTokens() < requestedTokens;
                        last = continueSegments ? null : output.finalWholeBody();
                    } else {
                        continueSegments = false;
                        last = whole;
                    }
                } catch (java.io.IOException e) {
                    continueSegments = false;
                    last = null;
                }
                if (!continueSegments && last != null) {
                    startResponse(attempt, "application/json");
                }
            }
            if (continueSegments) {
                segment++;
                continuations++;
            }
        }
        if (continueSegments) {
            ctx.metrics().pdContinuation(endpoint.path);
            launch();
            return;
        }
        if (last == null) {
            fail(attempt, 502, "bad_decode_body", "decode worker " + attempt.decodeWorker.url() + " sent an unreadable body");
            return;
        }
        clientResponse.write(true, ByteBuffer.wrap(last), clientCallback);
        finish(200, null);
    }

    private void onPrefillComplete(Attempt attempt, Result result, byte[] content, String mediaType) {
        ctx.inFlight().release(attempt.prefillWorker.id());
        Throwable failure = result.getFailure();
        int status = result.getResponse() == null ? 0 : result.getResponse().getStatus();
        Traces.endUpstream(attempt.prefillSpan, status, failure != null ? ProxyExchange.failureKind(failure, status > 0)
                : status >= 200 && status < 300 ? null : "status_" + status);
        if (failure == null && status < 500 && status != 429) {
            ctx.breakers().onSuccess(attempt.prefillWorker.id());
        } else if (failure != null || status >= 500) {
            ctx.breakers().onFailure(attempt.prefillWorker.id());
            ctx.metrics().upstreamError(attempt.prefillWorker.url(),
                    failure != null ? ProxyExchange.failureKind(failure, status > 0) : "status_" + status);
        }
        if (attempt.abandoned || clientGone || attempt.decodeDone) {
            return;
        }
        if (failure == null && status >= 200 && status < 300) {
            return; // the decode side carries the response
        }
        attempt.abandon(false);
        if (status == 429) {
            busy(attempt, content, result.getResponse().getHeaders().get(HttpHeader.RETRY_AFTER), mediaType);
            return;
        }
        if (failure == null && status >= 400 && status < 500) {
            relayOrFail(attempt, status, content, mediaType, "prefill_" + status);
            return;
        }
        String kind = failure != null ? ProxyExchange.failureKind(failure, status > 0) : "status_" + status;
        if (!retryForFailure(kind)) {
            fail(attempt, kind.equals("timeout") ? 504 : 502, kind, "prefill worker " + attempt.prefillWorker.url()
                    + (failure != null ? " failed: " + failure : " answered " + status));
        }
    }

    /** Retries a failed first-segment attempt on a new pair while attempts remain and nothing was sent. */
    private boolean retryForFailure(String kind) {
        synchronized (this) {
            if (responseStarted || segment > 0 || clientGone || abortReason != null
                    || attempts >= ctx.config().retryMaxAttempts()) {
                return false;
            }
        }
        ctx.metrics().retry(endpoint.path, kind);
        ctx.client().getScheduler().schedule(() -> {
            if (!choosePair()) {
                fail(null, 503, "no_worker", "no usable prefill/decode pair left");
                return;
            }
            launch();
        }, BUSY_BACKOFF_NANOS, TimeUnit.NANOSECONDS);
        return true;
    }

    private void busy(Attempt attempt, byte[] content, String retryAfter, String mediaType) {
        boolean retry;
        synchronized (this) {
            retry = System.nanoTime() < busyDeadlineNanos && !clientGone && abortReason == null;
        }
        if (retry) {
            ctx.metrics().retry(endpoint.path, "busy");
            ctx.client().getScheduler().schedule(() -> {
                boolean paired;
                synchronized (this) {
                    paired = segment > 0 || choosePair();
                }
                if (!paired) {
                    fail(attempt, 503, "no_worker", "no usable prefill/decode pair left");
                    return;
                }
                launch();
            }, BUSY_BACKOFF_NANOS, TimeUnit.NANOSECONDS);
            return;
        }
        if (busyDeadlineNanos != Long.MIN_VALUE) {
            ctx.metrics().retriesExhausted(endpoint.path);
        }
        boolean started;
        synchronized (this) {
            started = responseStarted;
        }
        if (started) {
            fail(attempt, 429, "busy", "a PD node is busy and output was already streamed; not replaying it");
            return;
        }
        if (retryAfter == null) {
            retryAfter = "1";
        }
        clientResponse.getHeaders().put(HttpHeader.RETRY_AFTER, retryAfter);
        relayOrFail(attempt, 429, content, mediaType, "busy");
    }

    /** Relays a worker's error answer verbatim when nothing was sent yet, else ends the stream. */
    private void relayOrFail(Attempt attempt, int status, byte[] content, String mediaType, String kind) {
        boolean started;
        synchronized (this) {
            started = responseStarted;
            responseStarted = true;
        }
        if (started) {
            fail(attempt, status, kind, "PD worker answered " + status);
            return;
        }
        clientResponse.setStatus(status);
        clientResponse.getHeaders().put(HttpHeader.CONTENT_TYPE, mediaType == null ? "application/json" : mediaType);
        if (attempt != null) {
            clientResponse.getHeaders().put(DECODE_URL_HEADER, attempt.decodeWorker.url());
        }
        clientResponse.write(true, ByteBuffer.wrap(content == null ? new byte[0] : content), clientCallback);
        finish(status, kind);
    }

    /** Ends the request with an error: a JSON error before the first byte, an SSE error event after. */
    private void fail(Attempt attempt, int status, String kind, String message) {
        if (finished.get()) {
            return;
        }
        boolean started;
        synchronized (this) {
            started = responseStarted;
            responseStarted = true;
        }
        if (!started) {
            OpenAiErrors.send(clientResponse, clientCallback, status, OpenAiErrors.typeFor(status), message);
        } else if (streaming) {
            clientResponse.write(true, OpenAiErrors.sseEvent(status, OpenAiErrors.typeFor(status), message), clientCallback);
        } else {
            clientCallback.failed(new java.io.IOException(message));
        }
        finish(status, kind);
    }

    private void startResponse(Attempt attempt, String contentType) {
        if (responseStarted) {
            return;
        }
        responseStarted = true;
        RouteFacts.of(clientRequest).firstByte(System.nanoTime() - startNanos);
        clientResponse.setStatus(200);
        clientResponse.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        if (streaming) {
            clientResponse.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        }
        clientResponse.getHeaders().put(DECODE_URL_HEADER, attempt.decodeWorker.url());
        clientResponse.getHeaders().put(RouterHandler.WORKER_HEADER, attempt.prefillWorker.url());
    }

    private void finish(int status, String failureKind) {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        ctx.active().remove(this);
        ctx.metrics().request(endpoint.path, status);
        ctx.metrics().duration(endpoint.path, failureKind == null ? "ok" : failureKind, System.nanoTime() - startNanos);
        if (continuations > 0) {
            ctx.metrics().pdSegments(endpoint.path, continuations + 1);
        }

    }

    static String host(Worker worker) {
        String host = URI.create(worker.url()).getHost();
        return host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    }
}
