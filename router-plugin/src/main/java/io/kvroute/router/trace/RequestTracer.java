package io.kvroute.router.trace;

import java.util.function.Function;

/**
 * Starts the trace of one incoming request. One instance per process, thread-safe.
 *
 * <p>{@link #off()} is the default: no tracing SDK object exists, every span is {@link
 * TraceSpan#NOOP} except that an incoming {@code traceparent}/{@code tracestate} is handed on
 * unchanged to the workers, so an engine can still join its caller's trace. {@link OtelRequestTracer}
 * continues an incoming context or starts a new trace, sampled by ratio.
 */
public interface RequestTracer extends AutoCloseable {

    String TRACEPARENT = "traceparent";
    String TRACESTATE = "tracestate";

    /**
     * The server span of an incoming request.
     *
     * @param name span name
     * @param incomingHeaders header lookup by lower-case name (null when absent)
     */
    TraceSpan ingress(String name, Function<String, String> incomingHeaders);

    /** True when spans are recorded and exported. */
    boolean enabled();

    /** Flushes and stops the exporter (no-op when off). */
    @Override
    void close();

    /** Tracing off. */
    static RequestTracer off() {
        return PassThroughTracer.INSTANCE;
    }

    /** OTLP export when {@code otlpTracesEndpoint} is set, else {@link #off()} (no SDK object created). */
    static RequestTracer create(String otlpTracesEndpoint, double samplingRatio, String serviceName) {
        return otlpTracesEndpoint == null ? off() : OtelRequestTracer.otlp(otlpTracesEndpoint, samplingRatio, serviceName);
    }
}
