package io.kvroute.router.trace;

import java.util.function.BiConsumer;

/**
 * One span of a request's trace, as the request path sees it: start children, tag, propagate to an
 * upstream request, end. Every method is safe on {@link #NOOP}, so call sites never test whether
 * tracing is on. A span is used by one request at a time; {@link #end} is idempotent.
 */
public interface TraceSpan {

    /** Tracing off: does nothing, propagates nothing. */
    TraceSpan NOOP = new InertSpan();

    /** A started child span (internal work: tokenize, select, a PD segment). */
    TraceSpan child(String name);

    /** A started child span for a call to another process (an upstream attempt): its context is what {@link #inject} sends. */
    TraceSpan clientChild(String name);

    /** A child span that started at a known wall-clock time (for work timed elsewhere, e.g. an engine queue). */
    TraceSpan childAt(String name, long startEpochNanos);

    /** Adds a tag; a null value is skipped. */
    TraceSpan tag(String key, String value);

    TraceSpan tag(String key, long value);

    /** Marks the span failed, with a short reason. */
    TraceSpan error(String message);

    /** Writes this span's W3C trace context ({@code traceparent}, {@code tracestate}) as headers. */
    void inject(BiConsumer<String, String> headers);

    /** The 32-hex trace id, or null when not traced. */
    String traceId();

    void end();

    /** Ends at a known wall-clock time. */
    void endAt(long epochNanos);
}
