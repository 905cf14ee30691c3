package io.kvroute.router.dispatch;

import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.trace.TraceSpan;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.json.JsonFields;
import io.kvroute.router.pd.BootstrapInjector;
import io.kvroute.router.pd.Continuation;
import io.kvroute.router.worker.Worker;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client request through a prefill/decode pair (SGLang's PD router, LightLLM's PD master).
 *
 * <p>The pair comes from {@link PdPairChooser}. The same body, carrying the prefill worker's
 * bootstrap rendezvous, goes to both concurrently ({@link PdAttempt}); the client sees the decode
 * response (streamed), with {@code x-kvroute-decode-url}. The prefill call runs to completion even
 * if the client disconnects (so the KV transfer finishes); only the decode side is aborted then. A
 * prefill 4xx is relayed verbatim; other failures follow the {@link RetryRule} (a new pair for a
 * first segment while attempts remain; a 429 inside the busy window), else a 502/504 before the
 * first byte and an SSE error event after it; the other side of a failed attempt is aborted.
 *
 * <p>Continuations: when the decode node ends a segment with the capacity marker, the rest is
 * re-dispatched to the same pair as a new segment ({@link Continuation}); {@link PdOutput} stitches
 * the segments into one stream with summed usage. Output already streamed is never replayed.
 *
 * <p>Threading: worker callbacks arrive on upstream threads; state changes are serialized on this
 * object and client writes are issued after leaving the lock. The {@link Exchange} makes the
 * terminal transition once-only, so racing prefill and decode failures end the request once.
 */
public final class PdDispatch implements Abortable {

    private static final Logger LOG = LoggerFactory.getLogger(PdDispatch.class);

    private final DispatchDeps deps;
    private final Route route;
    private final ObjectNode body;
    private final PdPairChooser chooser;
    private final Exchange client;
    private final RouteFacts facts;
    private final PdOutput output;
    private final int requestedTokens;
    /** The request has an exact text continuation (else a capacity end is the end of the response). */
    private final boolean continuable;

    private PdPairChooser.Pair pair; // guarded by this
    private int segment; // guarded by this
    private int attempts; // guarded by this
    private PdAttempt current; // guarded by this
    private volatile String abortReason;

    public PdDispatch(DispatchDeps deps, Route route, ObjectNode body, Supplier<List<Worker>> prefillPool,
            Supplier<List<Worker>> decodePool, ClientSink sink,
            long startNanos) {
        this.deps = deps;
        this.route = route;
        this.body = body;
        this.chooser = new PdPairChooser(deps, prefillPool, decodePool);
        this.facts = sink.facts();
        this.client = new Exchange(sink, route.api().path, route.streaming(), startNanos, deps.clock(),
                deps.outcomes(),
                () -> deps.active().remove(this));
        boolean wantsUsage = body.path("stream_options").path("include_usage").asBoolean(false);
        this.output = new PdOutput(route.api(), wantsUsage);
        this.requestedTokens = Continuation.requestedTokens(body, route.api().path, 128);
        this.continuable = Continuation.supports(body, route.api().path);
        if (route.streaming() && route.api() != ApiKind.GENERATE) {
            // Segments are accounted from usage, so always ask the decode side for it.
            // null or absent stream_options: a fresh object (the probe rejected any other type)
            JsonFields.writableObject(body, "stream_options").put("include_usage", true);
        }
    }

    public void start() {
        deps.active().add(this);
        client.onGone(() -> {
            PdAttempt attempt;
            synchronized (this) {
                attempt = current;
            }
            if (attempt != null) {
                attempt.abortDecode(new IOException("client went away")); // the prefill keeps going so the KV transfer completes
            }
        });
        boolean paired;
        TraceSpan select = facts.span().child("kvroute.select");
        PdPairChooser.Pair chosen;
        synchronized (this) {
            pair = chooser.choose(route);
            chosen = pair;
            paired = pair != null;
        }
        noteDecision(select, chosen);
        if (!paired) {
            client.fail(503, Failure.of(FailureKind.NO_WORKER), "no usable prefill/decode pair");
            return;
        }
        launch();
    }

    @Override
    public void abort(String reason) {
        abortReason = reason;
        PdAttempt attempt;
        synchronized (this) {
            attempt = current;
        }
        if (attempt != null) {
            attempt.abandon(true);
        }
        client.fail(503, Failure.of(FailureKind.SHUTDOWN), reason);
    }

    /** Records the pair choice in the access-log facts and ends its select span. */
    private void noteDecision(TraceSpan select, PdPairChooser.Pair chosen) {
        if (chosen != null) {
            facts.decision(chosen.policy(), chosen.reason(), chosen.matchedTokens(), chosen.decode().url());
            facts.prefillWorker(chosen.prefill().url());
        }
        Traces.endSelect(select, facts);
    }

    private void launch() {
        if (client.terminal()) {
            return; // ended meanwhile (shutdown during a retry backoff)
        }
        if (abortReason != null) {
            client.fail(503, Failure.of(FailureKind.SHUTDOWN), abortReason);
            return;
        }
        PdAttempt attempt;
        byte[] bytes;
        int attemptNumber;
        int retry;
        synchronized (this) {
            attempts++;
            attemptNumber = attempts;
            retry = attempts - 1 - segment;
            attempt = new PdAttempt(pair.prefill(), pair.decode(), segment,
                    OwnershipOnAccept.of(pair.prefillDecision(), deps.onDispatched()));
            current = attempt;
            ObjectNode segmentBody = segment == 0 ? body.deepCopy()
                    : Continuation.next(body, route.api().path, output.generatedText(),
                            Math.max(1, requestedTokens - output.generatedTokens()), segment);
            BootstrapInjector.inject(segmentBody, host(attempt.prefillWorker), attempt.prefillWorker.bootstrapPort(),
                    deps.rooms());
            bytes = segmentBody.toString().getBytes(StandardCharsets.UTF_8);
            output.beginSegment();
            client.note(attempts, segment + 1, attempt.prefillWorker.url(), attempt.decodeWorker.url());
        }
        deps.inFlight().acquire(attempt.prefillWorker.id());
        deps.inFlight().acquire(attempt.decodeWorker.id());
        facts.segments(attempt.segment + 1);
        facts.retries(retry);
        attempt.segmentSpan = facts.span().child(attempt.segment == 0 ? "kvroute.pd.segment" : "kvroute.pd.continuation")
                .tag("segment", attempt.segment).tag("retry", retry);
        attempt.prefillSpan = Traces.upstream(attempt.segmentSpan, "kvroute.upstream.prefill", attempt.prefillWorker, retry);
        attempt.decodeSpan = Traces.upstream(attempt.segmentSpan, "kvroute.upstream.decode", attempt.decodeWorker, retry);
        long dispatchedAt = deps.clock().nanoTime();
        if (attemptNumber == 1) {
            deps.metrics().overhead(route.api().path, dispatchedAt - client.startNanos());
        }
        deps.loads().dispatchLog().recordDispatch(attempt.prefillWorker.id(), dispatchedAt);
        deps.loads().dispatchLog().recordDispatch(attempt.decodeWorker.id(), dispatchedAt);
        String path = route.api().path;
        attempt.send(deps.upstream(), deps.requests().prefill(attempt.prefillWorker, path, bytes, attemptNumber, attempt.segment,
                attempt.prefillSpan),
                deps.requests().decode(attempt.decodeWorker, path, bytes, route.streaming(), attemptNumber, attempt.segment,
                        attempt.decodeSpan),
                this);
        if (client.gone()) {
            attempt.abortDecode(new IOException("client went away"));
        }
    }

    /** Hook: a decode chunk. Streamed through the output stitcher when the decode answer is a 200 stream. */
    void onDecodeContent(PdAttempt attempt, ByteBuffer chunk, Completion done) {
        try {
            relayDecodeContent(attempt, chunk, done);
        } catch (RuntimeException e) {
            failUnexpected(attempt, e);
            done.failed(e);
        }
    }

    private void relayDecodeContent(PdAttempt attempt, ByteBuffer chunk, Completion done) {
        if (attempt.abandoned || attempt.decodeStatus != 200 || !route.streaming()) {
            attempt.bufferDecode(chunk);
            done.succeeded();
            return;
        }
        byte[] bytes = new byte[chunk.remaining()];
        chunk.get(bytes);
        byte[] visible;
        synchronized (this) {
            visible = output.onStreamBytes(bytes);
        }
        if (visible.length == 0) {
            done.succeeded();
            return;
        }
        startResponse(attempt, "text/event-stream");
        attempt.streamedAny = true;
        client.write(ByteBuffer.wrap(visible), done);
    }

    /** Hook: the decode call ended. */
    void onDecodeComplete(PdAttempt attempt, Throwable failure) {
        deps.inFlight().release(attempt.decodeWorker.id());
        if (attempt.abandoned) {
            return;
        }
        try {
            decodeCompleted(attempt, failure);
        } catch (RuntimeException e) {
            failUnexpected(attempt, e);
        }
    }

    private void decodeCompleted(PdAttempt attempt, Throwable failure) {
        attempt.decodeDone = true;
        if (client.gone()) {
            attempt.abandoned = true;
            client.clientGone(failure);
            return;
        }
        if (failure != null) {
            FailureKind kind = Failures.classify(failure, attempt.decodeStatus > 0);
            Failure typed = new Failure(kind, 0, Failure.Hop.DECODE);
            deps.breakers().onFailure(attempt.decodeWorker.id());
            deps.metrics().upstreamError(attempt.decodeWorker.url(), typed.label());
            attempt.abandon(true);
            retryOrFail(attempt, typed, "decode worker " + attempt.decodeWorker.url()
                    + (kind == FailureKind.TIMEOUT ? " timed out" : " failed: " + failure));
            return;
        }
        int status = attempt.decodeStatus;
        if (status == 429) {
            attempt.abandon(true);
            busy(attempt, Failure.Hop.DECODE, attempt.decodeBody(), attempt.decodeRetryAfter, attempt.decodeContentType);
            return;
        }
        if (status != 200) {
            Failure typed = Failure.status(status, Failure.Hop.DECODE);
            if (status >= 500) {
                deps.breakers().onFailure(attempt.decodeWorker.id());
            }
            attempt.abandon(true);
            if (status >= 500 && retry(attempt, typed)) {
                return;
            }
            relayOrFail(attempt, status, attempt.decodeBody(), attempt.decodeContentType, typed);
            return;
        }
        deps.breakers().onSuccess(attempt.decodeWorker.id());
        segmentDone(attempt);
    }

    private void segmentDone(PdAttempt attempt) {
        byte[] last;
        boolean continueSegments;
        synchronized (this) {
            if (route.streaming()) {
                output.endSegment();
                continueSegments = continuable && output.segmentEndedForCapacity() && output.generatedTokens() < requestedTokens;
                last = continueSegments ? null : output.streamTrailer(body.path("model").asText(null));
            } else {
                try {
                    byte[] whole = output.onWholeBody(attempt.decodeBody());
                    if (whole == null) {
                        output.endSegment();
                        continueSegments = continuable && output.generatedTokens() < requestedTokens;
                        last = continueSegments ? null : output.finalWholeBody();
                    } else {
                        continueSegments = false;
                        last = whole;
                    }
                } catch (IOException | RuntimeException e) {
                    continueSegments = false; // malformed decode body: answered with a JSON error below
                    last = null;
                }
            }
            if (continueSegments) {
                segment++;
            }
        }
        if (continueSegments) {
            deps.metrics().pdContinuation(route.api().path);
            launch();
            return;
        }
        if (last == null) {
            client.fail(502, new Failure(FailureKind.BAD_BODY, 0, Failure.Hop.DECODE),
                    "decode worker " + attempt.decodeWorker.url() + " sent an unreadable body");
            return;
        }
        startResponse(attempt, route.streaming() ? "text/event-stream" : "application/json");
        client.complete(ByteBuffer.wrap(last), null);
    }

    /** Hook: the prefill call ended. */
    void onPrefillComplete(PdAttempt attempt, int status, Throwable failure, byte[] content, String mediaType,
            String retryAfter) {
        deps.inFlight().release(attempt.prefillWorker.id());
        try {
            prefillCompleted(attempt, status, failure, content, mediaType, retryAfter);
        } catch (RuntimeException e) {
            failUnexpected(attempt, e);
        }
    }

    private void prefillCompleted(PdAttempt attempt, int status, Throwable failure, byte[] content, String mediaType,
            String retryAfter) {
        Failure typed = failure != null
                ? new Failure(Failures.classify(failure, status > 0), 0, Failure.Hop.PREFILL)
                : status >= 200 && status < 300 ? null : Failure.status(status, Failure.Hop.PREFILL);
        if (failure != null && attempt.prefillAbortedByRouter) {
            // the router aborted it (decode failed or was busy, shutdown): says nothing about this worker
        } else if (typed == null || (!typed.blamesWorker() && typed.kind() != FailureKind.BUSY)) {
            deps.breakers().onSuccess(attempt.prefillWorker.id());
        } else if (typed.blamesWorker()) {
            deps.breakers().onFailure(attempt.prefillWorker.id());
            deps.metrics().upstreamError(attempt.prefillWorker.url(), new Failure(typed.kind(), status, Failure.Hop.WORKER).label());
        }
        if (attempt.abandoned || client.gone() || attempt.decodeDone || typed == null) {
            return; // on success the decode side carries the response
        }
        attempt.abandon(false);
        if (typed.kind() == FailureKind.BUSY) {
            busy(attempt, Failure.Hop.PREFILL, content, retryAfter, mediaType);
            return;
        }
        if (failure == null && status >= 400 && status < 500) {
            relayOrFail(attempt, status, content, mediaType, typed);
            return;
        }
        retryOrFail(attempt, typed, "prefill worker " + attempt.prefillWorker.url()
                + (failure != null ? " failed: " + failure : " answered " + status));
    }

    private void retryOrFail(PdAttempt attempt, Failure failure, String message) {
        if (!retry(attempt, failure)) {
            client.fail(Failures.clientStatus(failure), failure, abortReason != null ? abortReason : message);
        }
    }

    /** Asks the rule; schedules a new pair (first segment) or the same pair (continuation) when it says retry. */
    private boolean retry(PdAttempt attempt, Failure failure) {
        int attemptNumber;
        synchronized (this) {
            attemptNumber = attempts;
        }
        Step step = deps.retry().afterPd(new AttemptFacts(attemptNumber, failure, attempt.streamedAny, client.gone(),
                abortReason != null, attempt.segment > 0, client.startNanos(), deps.clock().nanoTime()));
        if (step.action() != Step.Action.RETRY) {
            return false;
        }
        deps.metrics().retry(route.api().path, failure.label());
        deps.clock().schedule(() -> {
            if (client.terminal()) {
                return;
            }
            boolean paired;
            boolean rechosen;
            synchronized (this) {
                rechosen = segment == 0;
            }
            TraceSpan select = rechosen ? facts.span().child("kvroute.select") : TraceSpan.NOOP;
            PdPairChooser.Pair chosen;
            synchronized (this) {
                if (rechosen) {
                    pair = chooser.choose(route);
                }
                chosen = pair;
                paired = pair != null;
            }
            if (rechosen) {
                noteDecision(select, chosen);
            }
            if (!paired) {
                client.fail(503, Failure.of(FailureKind.NO_WORKER), "no usable prefill/decode pair left");
                return;
            }
            launch();
        }, step.delayNanos());
        return true;
    }

    private void busy(PdAttempt attempt, Failure.Hop hop, byte[] content, String retryAfter, String mediaType) {
        Failure failure = new Failure(FailureKind.BUSY, 429, hop);
        if (retry(attempt, failure)) {
            return;
        }
        if (deps.retry().busyWindowEnabled()) {
            deps.metrics().retriesExhausted(route.api().path);
        }
        if (client.begun()) {
            client.fail(429, failure, "a PD node is busy and output was already streamed; not replaying it");
            return;
        }
        client.header("Retry-After", retryAfter == null ? "1" : retryAfter);
        relayOrFail(attempt, 429, content, mediaType, failure);
    }

    /** An unexpected exception on a worker callback thread: the client still gets an answer. */
    private void failUnexpected(PdAttempt attempt, RuntimeException e) {
        LOG.warn("PD relay failed for {}", route.api().path, e);
        attempt.abandon(true);
        client.fail(502, new Failure(FailureKind.BAD_BODY, 0, Failure.Hop.DECODE),
                "the PD relay failed: " + e.getClass().getSimpleName());
    }

    /** Relays a worker's error answer verbatim when nothing was sent yet, else ends the stream. */
    private void relayOrFail(PdAttempt attempt, int status, byte[] content, String mediaType, Failure failure) {
        client.header(Headers.DECODE_URL, attempt.decodeWorker.url());
        client.relay(status, mediaType, content, failure);
    }

    private void startResponse(PdAttempt attempt, String contentType) {
        if (client.begun()) {
            return;
        }
        client.status(200);
        client.header("Content-Type", contentType);
        if (route.streaming()) {
            client.header("Cache-Control", "no-cache");
        }
        client.header(Headers.DECODE_URL, attempt.decodeWorker.url());
        client.header(Headers.WORKER, attempt.prefillWorker.url());
    }

    static String host(Worker worker) {
        String host = URI.create(worker.url()).getHost();
        return host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    }
}
