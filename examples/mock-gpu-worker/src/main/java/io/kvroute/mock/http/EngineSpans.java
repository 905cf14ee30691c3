package io.kvroute.mock.http;

import io.kvroute.mock.engine.TokenSink;
import io.kvroute.router.trace.TraceSpan;
import java.time.Instant;

/**
 * Reports where one request spent its time inside the engine as three child spans of the worker's
 * request span: {@code engine.queue} (arrival to the first prefill chunk), {@code engine.prefill}
 * (to the first token; tagged with the prefix-cache hit) and {@code engine.decode} (to the end).
 * Spans are emitted with their recorded wall-clock bounds when the request ends, so nothing is
 * created per token. An engine that never calls {@link #onPrefillStarted} (the simple engine starts
 * at once) gets an empty queue span.
 *
 * <p>Threading: callbacks come from the engine thread (errors may come from admission); fields are
 * volatile and the spans are emitted once, by whichever of finish/error comes first.
 */
final class EngineSpans implements TokenSink {

    private final TokenSink delegate;
    private final TraceSpan parent;
    private final long arrivalEpochNanos = nowEpochNanos();
    private volatile long prefillStartEpochNanos = -1;
    private volatile long prefillDoneEpochNanos = -1;
    private volatile int cachedTokens;
    private volatile boolean emitted;

    private EngineSpans(TokenSink delegate, TraceSpan parent) {
        this.delegate = delegate;
        this.parent = parent;
    }

    /** {@code sink} itself when tracing is off. */
    static TokenSink wrap(TokenSink sink, TraceSpan parent) {
        return parent == TraceSpan.NOOP ? sink : new EngineSpans(sink, parent);
    }

    @Override
    public void onPrefillStarted() {
        prefillStartEpochNanos = nowEpochNanos();
        delegate.onPrefillStarted();
    }

    @Override
    public void onPrefillDone(int cachedTokens) {
        if (prefillDoneEpochNanos < 0) {
            this.cachedTokens = cachedTokens;
            prefillDoneEpochNanos = nowEpochNanos();
        }
        delegate.onPrefillDone(cachedTokens);
    }

    @Override
    public void onToken(int tokenId) {
        if (prefillDoneEpochNanos < 0) {
            prefillDoneEpochNanos = nowEpochNanos();
        }
        delegate.onToken(tokenId);
    }

    @Override
    public void onFinish(String finishReason, Usage usage) {
        emit(null, usage);
        delegate.onFinish(finishReason, usage);
    }

    @Override
    public void onError(int httpStatus, String errorType, String message) {
        emit(errorType, null);
        delegate.onError(httpStatus, errorType, message);
    }

    private void emit(String error, Usage usage) {
        if (emitted) {
            return;
        }
        emitted = true;
        long end = nowEpochNanos();
        long prefillStart = prefillStartEpochNanos >= 0 ? prefillStartEpochNanos
                : prefillDoneEpochNanos >= 0 ? arrivalEpochNanos : end;
        parent.childAt("engine.queue", arrivalEpochNanos).endAt(prefillStart);
        if (prefillDoneEpochNanos < 0) {
            if (error != null) {
                parent.error(error);
            }
            return;
        }
        parent.childAt("engine.prefill", prefillStart).tag("cached_tokens", cachedTokens).endAt(prefillDoneEpochNanos);
        TraceSpan decode = parent.childAt("engine.decode", prefillDoneEpochNanos);
        if (usage != null) {
            decode.tag("completion_tokens", usage.completionTokens());
        }
        if (error != null) {
            decode.error(error);
        }
        decode.endAt(end);
    }

    private static long nowEpochNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
