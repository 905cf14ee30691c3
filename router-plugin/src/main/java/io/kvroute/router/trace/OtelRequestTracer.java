package io.kvroute.router.trace;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.micrometer.tracing.propagation.Propagator;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Tracing through Micrometer Tracing's OpenTelemetry bridge and the OpenTelemetry SDK.
 *
 * <p>Spans are parented explicitly (never through a thread-local scope): the request path is
 * asynchronous, so each call site holds the {@link TraceSpan} it continues from. Propagation is W3C
 * trace context only. Sampling is parent-based: an incoming {@code traceparent} keeps its caller's
 * decision, a new trace is sampled with the configured ratio; an unsampled span still propagates (with
 * the sampled flag off). Export goes through a batch processor (OTLP/HTTP protobuf) or, in tests, a
 * simple processor into any {@link SpanExporter}.
 */
public final class OtelRequestTracer implements RequestTracer {

    private static final Propagator.Getter<Function<String, String>> GETTER = (carrier, key) -> carrier.apply(key);
    private static final Propagator.Setter<BiConsumer<String, String>> SETTER = (carrier, key, value) -> {
        if (carrier != null) {
            carrier.accept(key, value);
        }
    };

    private final SdkTracerProvider provider;
    private final OtelTracer tracer;
    private final OtelPropagator propagator;

    private OtelRequestTracer(SpanProcessor processor, double samplingRatio, String serviceName) {
        this.provider = SdkTracerProvider.builder()
                .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(samplingRatio)))
                .setResource(Resource.getDefault().merge(Resource.create(
                        Attributes.of(AttributeKey.stringKey("service.name"), serviceName))))
                .addSpanProcessor(processor)
                .build();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(provider)
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
        io.opentelemetry.api.trace.Tracer otel = sdk.getTracer("io.kvroute");
        this.tracer = new OtelTracer(otel, new OtelCurrentTraceContext(), event -> { });
        this.propagator = new OtelPropagator(sdk.getPropagators(), otel);
    }

    /** Exports in batches over OTLP/HTTP protobuf to {@code endpoint} (the collector's {@code /v1/traces}). */
    public static OtelRequestTracer otlp(String endpoint, double samplingRatio, String serviceName) {
        SpanExporter exporter = OtlpHttpSpanExporter.builder().setEndpoint(endpoint).build();
        return new OtelRequestTracer(BatchSpanProcessor.builder(exporter).build(), samplingRatio, serviceName);
    }

    /** Hands every ended span straight to {@code exporter} (tests: the SDK's in-memory exporter). */
    public static OtelRequestTracer forExporter(SpanExporter exporter, double samplingRatio, String serviceName) {
        return new OtelRequestTracer(SimpleSpanProcessor.create(exporter), samplingRatio, serviceName);
    }

    @Override
    public TraceSpan ingress(String name, Function<String, String> incomingHeaders) {
        Span span = propagator.extract(incomingHeaders, GETTER).name(name).kind(Span.Kind.SERVER).start();
        return new OtelSpan(span);
    }

    @Override
    public boolean enabled() {
        return true;
    }

    @Override
    public void close() {
        provider.close();
    }

    /** One Micrometer span; {@link #end} runs once. */
    private final class OtelSpan implements TraceSpan {
        private final Span span;
        private final AtomicBoolean ended = new AtomicBoolean();

        OtelSpan(Span span) {
            this.span = Objects.requireNonNull(span, "span");
        }

        @Override
        public TraceSpan child(String name) {
            return new OtelSpan(tracer.spanBuilder().setParent(span.context()).name(name).start());
        }

        @Override
        public TraceSpan clientChild(String name) {
            return new OtelSpan(tracer.spanBuilder().setParent(span.context()).name(name).kind(Span.Kind.CLIENT).start());
        }

        @Override
        public TraceSpan childAt(String name, long startEpochNanos) {
            return new OtelSpan(tracer.spanBuilder().setParent(span.context()).name(name)
                    .startTimestamp(startEpochNanos, TimeUnit.NANOSECONDS).start());
        }

        @Override
        public TraceSpan tag(String key, String value) {
            if (value != null) {
                span.tag(key, value);
            }
            return this;
        }

        @Override
        public TraceSpan tag(String key, long value) {
            span.tag(key, value);
            return this;
        }

        @Override
        public TraceSpan error(String message) {
            span.error(new TracedFailure(message));
            return this;
        }

        @Override
        public void inject(BiConsumer<String, String> headers) {
            propagator.inject(span.context(), headers, SETTER);
        }

        @Override
        public String traceId() {
            return span.context().traceId();
        }

        @Override
        public void end() {
            if (ended.compareAndSet(false, true)) {
                span.end();
            }
        }

        @Override
        public void endAt(long epochNanos) {
            if (ended.compareAndSet(false, true)) {
                span.end(epochNanos, TimeUnit.NANOSECONDS);
            }
        }
    }

    /** A span's failure reason; no stack trace (it names an outcome, not a bug). */
    private static final class TracedFailure extends RuntimeException {
        TracedFailure(String message) {
            super(message, null, false, false);
        }
    }
}
