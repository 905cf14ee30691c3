package io.kvroute.router.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

class OtelRequestTracerTest {

    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void off_createsNoSpans_butForwardsTheCallersContextVerbatim() {
        RequestTracer off = RequestTracer.create(null, 1.0, "test");
        assertThat(off.enabled()).isFalse();
        assertThat(off.ingress("r", name -> null)).isSameAs(TraceSpan.NOOP);

        Map<String, String> in = Map.of("traceparent", TRACEPARENT, "tracestate", "vendor=1");
        TraceSpan span = off.ingress("r", in::get).child("a").clientChild("b");
        Map<String, String> out = new HashMap<>();
        span.inject(out::put);
        assertThat(out).isEqualTo(in);
        assertThat(span.traceId()).isNull();
    }

    @Test
    void childSpans_formATree_andInjectTheirOwnContext() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OtelRequestTracer tracer = OtelRequestTracer.forExporter(exporter, 1.0, "test")) {
            TraceSpan ingress = tracer.ingress("ingress", Map.of("traceparent", TRACEPARENT)::get);
            TraceSpan upstream = ingress.clientChild("upstream").tag("worker", "w1").tag("retry", 2);
            Map<String, String> headers = new HashMap<>();
            upstream.inject(headers::put);
            upstream.error("status_503");
            upstream.end();
            upstream.end(); // idempotent
            ingress.end();

            List<SpanData> spans = exporter.getFinishedSpanItems();
            assertThat(spans).hasSize(2);
            SpanData up = spans.get(0);
            SpanData in = spans.get(1);
            assertThat(in.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
            assertThat(up.getParentSpanId()).isEqualTo(in.getSpanId());
            assertThat(up.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736").isEqualTo(ingress.traceId());
            assertThat(headers.get("traceparent")).startsWith("00-" + up.getTraceId() + "-" + up.getSpanId() + "-");
            assertThat(up.getStatus().getStatusCode().name()).isEqualTo("ERROR");
        }
    }

    @Test
    void samplingRatioZero_recordsNothing_butStillPropagates() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OtelRequestTracer tracer = OtelRequestTracer.forExporter(exporter, 0.0, "test")) {
            TraceSpan ingress = tracer.ingress("ingress", name -> null);
            Map<String, String> headers = new HashMap<>();
            ingress.clientChild("upstream").inject(headers::put);
            ingress.end();
            assertThat(exporter.getFinishedSpanItems()).isEmpty();
            assertThat(headers.get("traceparent")).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[02]"); // not sampled
        }
    }

    /** OTLP/HTTP export to a collector stand-in on loopback: a protobuf POST to /v1/traces arrives on close. */
    @Test
    void otlpExport_postsProtobufToV1Traces() throws Exception {
        CompletableFuture<byte[]> body = new CompletableFuture<>();
        CompletableFuture<String> contentType = new CompletableFuture<>();
        Server collector = new Server();
        ServerConnector connector = new ServerConnector(collector);
        connector.setHost("127.0.0.1");
        collector.addConnector(connector);
        collector.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                if (!"POST".equals(request.getMethod()) || !Request.getPathInContext(request).equals("/v1/traces")) {
                    response.setStatus(404);
                    callback.succeeded();
                    return true;
                }
                contentType.complete(request.getHeaders().get("content-type"));
                Content.Source.asByteBufferAsync(request).whenComplete((bytes, failure) -> {
                    byte[] copy = new byte[bytes.remaining()];
                    bytes.get(copy);
                    body.complete(copy);
                    response.setStatus(200);
                    callback.succeeded();
                });
                return true;
            }
        });
        collector.start();
        try {
            String endpoint = "http://127.0.0.1:" + connector.getLocalPort() + "/v1/traces";
            try (OtelRequestTracer tracer = OtelRequestTracer.otlp(endpoint, 1.0, "kvroute-test")) {
                TraceSpan ingress = tracer.ingress("kvroute.request", name -> null);
                ingress.child("kvroute.select").tag("policy", "cache_aware").end();
                ingress.end();
            } // close flushes the batch
            assertThat(contentType.get(10, TimeUnit.SECONDS)).isEqualTo("application/x-protobuf");
            String text = new String(body.get(10, TimeUnit.SECONDS), StandardCharsets.ISO_8859_1);
            assertThat(text).contains("kvroute.request", "kvroute.select", "cache_aware", "kvroute-test");
        } finally {
            collector.stop();
        }
    }
}
