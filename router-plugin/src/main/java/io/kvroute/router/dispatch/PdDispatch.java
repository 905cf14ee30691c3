package io.kvroute.router.dispatch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.dispatch.PdAttemptState.Event;
import io.kvroute.router.dispatch.PdAttemptState.Phase;
import io.kvroute.router.dispatch.PdAttemptState.Transition;
import io.kvroute.router.json.JsonFields;
import io.kvroute.router.pd.BootstrapInjector;
import io.kvroute.router.pd.Continuation;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
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
 * <p>State: each attempt is a {@link PdAttemptState} machine; this class only reacts to the
 * transitions it is handed, and exactly one transition of an attempt decides it (the
 * {@link Transition#decided} one), so racing prefill and decode endings, a shutdown and the client
 * leaving act once. The request's own progress (pair, segment, attempts) is an immutable
 * {@link Progress} published through a volatile field and replaced only by the sequential attempt
 * chain: start, then each attempt's deciding callback, then the retry timer or continuation it
 * starts. The {@link Exchange} makes the client's terminal transition once-only.
 *
 * <p>Threading: worker callbacks arrive on upstream threads; {@link #abort} and the client-gone
 * signal on any. No lock is held while calling the policies, the upstream, the client or a
 * listener: the only locks are the attempt's (see {@link PdAttempt}) and the output stitcher's,
 * which guards {@link PdOutput} alone.
 */
public final class PdDispatch implements Abortable {

    private static final Logger LOG = LoggerFactory.getLogger(PdDispatch.class);

    /** Where the request is: the pair in use, the segment being produced, the attempts made so far. */
    private record Progress(PdPairChooser.Pair pair, int segment, int attempts) {}

    private final DispatchDeps deps;
    private final PdRouting routing;
    private final Route route;
    private final ObjectNode body;
    private final PdPairChooser chooser;
    private final Exchange client;
    private final RouteFacts facts;
    private final PdOutput output; // guarded by itself: touched by the decode callbacks and the attempt chain
    private final int requestedTokens;
    /** The request has an exact text continuation (else a capacity end is the end of the response). */
    private final boolean continuable;

    private volatile Progress progress = new Progress(null, 0, 0);
    private volatile PdAttempt current;
    private volatile String abortReason;

    public PdDispatch(DispatchDeps deps, PdRouting routing, Route route, ObjectNode body,
            Supplier<List<Worker>> prefillPool, Supplier<List<Worker>> decodePool, ClientSink sink, long startNanos) {
        this(deps, routing, route, body, prefillPool, decodePool, sink, startNanos, null);
    }

    /**
     * @param decodeRoom where the router-side queue lets the request's decode leg go ({@link WorkerRoom}: PD requests
     *     hold their tokens on their decode worker), or null: anywhere in the decode pool
     */
    public PdDispatch(DispatchDeps deps, PdRouting routing, Route route, ObjectNode body,
            Supplier<List<Worker>> prefillPool, Supplier<List<Worker>> decodePool, ClientSink sink, long startNanos,
            WorkerRoom decodeRoom) {
        this.deps = deps;
        this.routing = routing;
        this.route = route;
        this.body = body;
        this.chooser = new PdPairChooser(deps, routing, prefillPool, decodePool, decodeRoom);
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
            PdAttempt attempt = current;
            if (attempt != null) {
                attempt.fire(Event.CLIENT_LEFT); // aborts the decode call; the prefill keeps going (KV transfer)
            }
        });
        if (choosePair("no usable prefill/decode pair")) {
            launch();
        }
    }

    @Override
    public void abort(String reason) {
        abortReason = reason;
        PdAttempt attempt = current;
        if (attempt != null) {
            attempt.fire(Event.ABANDON);
        }
        client.fail(503, Failure.of(FailureKind.SHUTDOWN), reason);
    }

    /** The attempt in flight or last made (tests look at its lock). */
    PdAttempt currentAttempt() {
        return current;
    }

    /** Asks the policies for a pair (no lock held) and publishes it; false after failing the request when there is none. */
    private boolean choosePair(String noPairMessage) {
        TraceSpan select = facts.span().child("kvroute.select");
        PdPairChooser.Pair chosen = chooser.choose(route);
        Progress now = progress;
        progress = new Progress(chosen, now.segment(), now.attempts());
        if (chosen != null) {
            facts.decision(chosen.policy(), chosen.reason(), chosen.matchedTokens(), chosen.decode().url());
            facts.prefillWorker(chosen.prefill().url());
            String adapter = route.hints().adapter();
            if (adapter != null && deps.lora() != null) {
                // both engines run the adapter; one decision per request (the prefill pick)
                deps.lora().noteSent(chosen.prefill(), adapter, true);
                deps.lora().noteSent(chosen.decode(), adapter, false);
            }
        }
        Traces.endSelect(select, facts);
        if (chosen == null) {
            client.fail(503, Failure.of(FailureKind.NO_WORKER), noPairMessage);
            return false;
        }
        return true;
    }

    /** False, after ending the exchange if it was not yet, when the request must not go on. */
    private boolean mayProceed() {
        if (client.terminal()) {
            return false; // ended meanwhile (shutdown during a retry backoff)
        }
        if (abortReason != null) {
            client.fail(503, Failure.of(FailureKind.SHUTDOWN), abortReason);
            return false;
        }
        if (client.gone()) {
            client.clientGone(null); // left during a backoff: no prefill is sent for nobody
            return false;
        }
        return true;
    }

    private void launch() {
        if (!mayProceed()) {
            return;
        }
        Progress before = progress;
        PdPairChooser.Pair pair = before.pair();
        int segment = before.segment();
        int attemptNumber = before.attempts() + 1;
        int retry = attemptNumber - 1 - segment;
        ObjectNode segmentBody;
        synchronized (output) {
            segmentBody = segment == 0 ? body.deepCopy()
                    : Continuation.next(body, route.api().path, output.generatedText(),
                            Math.max(1, requestedTokens - output.generatedTokens()), segment);
            output.beginSegment();
        }
        BootstrapInjector.inject(segmentBody, host(pair.prefill()), pair.prefill().bootstrapPort(), routing.rooms());
        // continuations drop the ids themselves (Continuation.next), so only a first segment can carry the router's
        PdLegBodies bodies = PdLegBodies.of(segmentBody, segment == 0 && route.bodyWithoutIds() != null,
                pair.prefill(), pair.decode());
        for (int i = 0; i < bodies.legsWithoutIds(); i++) {
            // counted per leg, as a plain attempt is in Dispatch: each is a body sent without the router's ids
            deps.metrics().inputIdsForwarding(route.hints().modelLabel(), "engine_unsupported");
        }
        TraceSpan segmentSpan = facts.span().child(segment == 0 ? "kvroute.pd.segment" : "kvroute.pd.continuation")
                .tag("segment", segment).tag("retry", retry);
        TraceSpan prefillSpan = Traces.upstream(segmentSpan, "kvroute.upstream.prefill", pair.prefill(), retry);
        TraceSpan decodeSpan = Traces.upstream(segmentSpan, "kvroute.upstream.decode", pair.decode(), retry);
        PdAttempt attempt = new PdAttempt(pair.prefill(), pair.decode(), segment, attemptNumber,
                OwnershipOnAccept.of(pair.prefillDecision(), deps.onDispatched()), segmentSpan, prefillSpan, decodeSpan);
        progress = new Progress(pair, segment, attemptNumber);
        current = attempt;
        client.note(attemptNumber, segment + 1, pair.prefill().url(), pair.decode().url());
        deps.inFlight().acquire(attempt.prefillWorker.id());
        deps.inFlight().acquire(attempt.decodeWorker.id());
        facts.segments(segment + 1);
        facts.retries(retry);
        long dispatchedAt = deps.clock().nanoTime();
        if (attemptNumber == 1) {
            deps.metrics().overhead(route.api().path, dispatchedAt - client.startNanos());
        }
        deps.loads().dispatchLog().recordDispatch(attempt.prefillWorker.id(), dispatchedAt);
        deps.loads().dispatchLog().recordDispatch(attempt.decodeWorker.id(), dispatchedAt);
        String path = route.api().path;
        attempt.send(deps.upstream(), deps.requests().prefill(attempt.prefillWorker, path, bodies.prefill(), attemptNumber,
                segment, prefillSpan),
                deps.requests().decode(attempt.decodeWorker, path, bodies.decode(), route.streaming(), attemptNumber, segment,
                        decodeSpan),
                this);
        if (abortReason != null) {
            attempt.fire(Event.ABANDON); // shut down while the calls were being sent
        } else if (client.gone()) {
            attempt.fire(Event.CLIENT_LEFT); // the client left while the calls were being sent
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
        if (attempt.decodeHead().status() != 200 || !route.streaming() || !attempt.state().phase().relays) {
            attempt.bufferDecode(chunk); // an error body or a whole answer, judged when the call ends
            done.succeeded();
            return;
        }
        byte[] bytes = new byte[chunk.remaining()];
        chunk.get(bytes);
        byte[] visible;
        synchronized (output) {
            visible = output.onStreamBytes(bytes);
        }
        if (visible.length == 0) {
            done.succeeded();
            return;
        }
        if (!attempt.fire(Event.DECODE_STREAMED).relays()) {
            done.succeeded(); // decided meanwhile (shutdown, the prefill failed, the client left): dropped
            return;
        }
        startResponse(attempt, "text/event-stream");
        client.write(ByteBuffer.wrap(visible), done);
    }

    /** Hook: the decode call ended. */
    void onDecodeComplete(PdAttempt attempt, Throwable failure) {
        deps.inFlight().release(attempt.decodeWorker.id());
        try {
            if (client.gone()) {
                attempt.fire(Event.CLIENT_LEFT);
            }
            PdAttempt.DecodeHead head = attempt.decodeHead();
            Transition step = attempt.fire(failure == null && head.status() == 200 ? Event.DECODE_OK : Event.DECODE_FAILED);
            if (step.decided()) {
                decodeDecided(attempt, step, head, failure);
            }
        } catch (RuntimeException e) {
            failUnexpected(attempt, e);
        }
    }

    private void decodeDecided(PdAttempt attempt, Transition step, PdAttempt.DecodeHead head, Throwable failure) {
        if (step.entered(Phase.CLIENT_GONE)) {
            client.clientGone(failure);
            return;
        }
        if (step.entered(Phase.DECODED)) {
            deps.breakers().onSuccess(attempt.decodeWorker.id());
            segmentDone(attempt);
            return;
        }
        // DECODE_FAILED: the machine has aborted the prefill call
        if (failure != null) {
            FailureKind kind = Failures.classify(failure, head.status() > 0);
            Failure typed = new Failure(kind, 0, Failure.Hop.DECODE);
            deps.breakers().onFailure(attempt.decodeWorker.id());
            deps.metrics().upstreamError(attempt.decodeWorker.url(), typed.label());
            retryOrFail(attempt, typed, "decode worker " + attempt.decodeWorker.url()
                    + (kind == FailureKind.TIMEOUT ? " timed out" : " failed: " + failure));
            return;
        }
        int status = head.status();
        if (status == 429) {
            busy(attempt, Failure.Hop.DECODE, attempt.decodeBody(), head.retryAfter(), head.contentType());
            return;
        }
        Failure typed = Failure.status(status, Failure.Hop.DECODE);
        if (status >= 500) {
            deps.breakers().onFailure(attempt.decodeWorker.id());
            if (retry(attempt, typed)) {
                return;
            }
        }
        relayOrFail(attempt, status, attempt.decodeBody(), head.contentType(), typed);
    }

    private void segmentDone(PdAttempt attempt) {
        byte[] last;
        boolean continueSegments;
        synchronized (output) {
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
        }
        if (continueSegments) {
            Progress now = progress;
            progress = new Progress(now.pair(), now.segment() + 1, now.attempts());
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
        if (client.gone()) {
            attempt.fire(Event.CLIENT_LEFT);
        }
        Transition step = attempt.fire(typed == null ? Event.PREFILL_OK : Event.PREFILL_FAILED);
        if (failure != null && step.prefillAbortedByRouter()) {
            // the router aborted it (decode failed or was busy, shutdown): says nothing about this worker
        } else if (typed == null || (!typed.blamesWorker() && typed.kind() != FailureKind.BUSY)) {
            deps.breakers().onSuccess(attempt.prefillWorker.id());
        } else if (typed.blamesWorker()) {
            deps.breakers().onFailure(attempt.prefillWorker.id());
            deps.metrics().upstreamError(attempt.prefillWorker.url(), new Failure(typed.kind(), status, Failure.Hop.WORKER).label());
        }
        if (!step.entered(Phase.PREFILL_FAILED)) {
            return; // on success the decode side carries the response; after a decision this changes nothing
        }
        // PREFILL_FAILED: the machine has aborted the decode call
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
        Step step = deps.retry().afterPd(new AttemptFacts(attempt.number, failure, attempt.state().streamed(),
                client.gone(), abortReason != null, attempt.segment > 0, client.startNanos(), deps.clock().nanoTime()));
        if (step.action() != Step.Action.RETRY) {
            return false;
        }
        deps.metrics().retry(route.api().path, failure.label());
        deps.clock().schedule(() -> {
            if (!mayProceed()) {
                return;
            }
            if (progress.segment() == 0 && !choosePair("no usable prefill/decode pair left")) {
                return; // a first segment is retried on a new pair; a continuation keeps its pair
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
        attempt.fire(Event.ABANDON);
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
