/**
 * Distributed tracing behind a two-type facade, so the request path stays a few lines per call site.
 *
 * <p>Start with {@link io.kvroute.router.trace.RequestTracer} (one per router: {@code off()} or an
 * OpenTelemetry one) and {@link io.kvroute.router.trace.TraceSpan} (start a child, tag, inject the W3C
 * {@code traceparent}/{@code tracestate} into an upstream request, end). {@link
 * io.kvroute.router.trace.OtelRequestTracer} is the only class that touches Micrometer Tracing and the
 * OpenTelemetry SDK; with tracing off none of it is loaded.
 */
package io.kvroute.router.trace;
