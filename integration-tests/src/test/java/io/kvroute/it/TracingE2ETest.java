package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.trace.OtelRequestTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tracing end to end over real HTTP: the router and the mock workers export into one in-memory
 * exporter, and each test asserts the span tree of one request, including the worker's
 * {@code engine.request} span whose parent must be the router's upstream span of that very call
 * (so the {@code traceparent} the worker received carried the current span) on every path: plain,
 * streaming, retries, PD prefill and decode legs and every continuation segment.
 */
class TracingE2ETest {

    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String CALLER_SPAN = "00f067aa0ba902b7";

    private static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    private static ObservabilityFleet fleet;
    private static Http http;

    @BeforeAll
    static void start() throws Exception {
        fleet = ObservabilityFleet.start(List.of("--retry-max-attempts", "3"),
                OtelRequestTracer.forExporter(SPANS, 1.0, "kvroute-router"),
                () -> OtelRequestTracer.forExporter(SPANS, 1.0, "kvroute-mock-worker"));
        http = new Http();
    }

    @AfterAll
    static void stop() throws Exception {
        if (http != null) {
            http.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    @BeforeEach
    void clear() {
        SPANS.reset();
    }

    @Test
    void plainRequest_continuesTheCallersTrace_andTheWorkerContinuesTheRoutersUpstreamSpan() throws Exception {
        ContentResponse response = http.client.newRequest(fleet.url("/v1/chat/completions")).method(HttpMethod.POST)
                .headers(h -> h.put("traceparent", "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01"))
                .body(new StringRequestContent("application/json",
                        ObservabilityFleet.chat(ObservabilityFleet.MODEL, "trace me", 4, false)))
                .timeout(30, TimeUnit.SECONDS).send();
        assertThat(response.getStatus()).isEqualTo(200);

        SpanData ingress = awaitSpan(s -> s.getName().equals("kvroute.request"));
        assertThat(ingress.getTraceId()).isEqualTo(TRACE_ID);
        assertThat(ingress.getParentSpanId()).isEqualTo(CALLER_SPAN);
        assertThat(ingress.getKind()).isEqualTo(SpanKind.SERVER);
        assertThat(tag(ingress, "endpoint")).isEqualTo("/v1/chat/completions");
        assertThat(tag(ingress, "model")).isEqualTo(ObservabilityFleet.MODEL);
        assertThat(tag(ingress, "status")).isEqualTo("200");

        SpanData tokenize = child(ingress, "kvroute.tokenize");
        assertThat(tag(tokenize, "input_tokens")).isNotNull();
        SpanData select = child(ingress, "kvroute.select");
        assertThat(tag(select, "policy")).isEqualTo("cache_aware");
        assertThat(tag(select, "decision_reason")).isNotBlank();
        assertThat(tag(select, "matched_tokens")).isNotNull();
        String worker = response.getHeaders().get("x-kvroute-worker");
        assertThat(tag(select, "worker")).isEqualTo(worker);

        SpanData upstream = child(ingress, "kvroute.upstream");
        assertThat(upstream.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(tag(upstream, "worker")).isEqualTo(worker);
        assertThat(tag(upstream, "retry")).isEqualTo("0");
        assertThat(tag(upstream, "outcome")).isEqualTo("ok");
        assertEngineTree(upstream, true);
    }

    @Test
    void streamingRequest_withoutTraceparent_startsATraceAtIngress() throws Exception {
        assertThat(http.stream(fleet.url("/v1/chat/completions"),
                ObservabilityFleet.chat(ObservabilityFleet.MODEL, "stream me", 6, true)).get().status()).isEqualTo(200);
        SpanData ingress = awaitSpan(s -> s.getName().equals("kvroute.request"));
        assertThat(ingress.getParentSpanContext().isValid()).isFalse();
        assertThat(ingress.getTraceId()).isNotEqualTo(TRACE_ID);
        SpanData upstream = child(ingress, "kvroute.upstream");
        assertEngineTree(upstream, true);
    }

    @Test
    void everyRetry_isItsOwnUpstreamSpan_andEachWorkerCallCarriesIt() throws Exception {
        fleet.workers.forEach(w -> w.handler().injectFailures(503, 1)); // first call on each worker fails
        try {
            ContentResponse response = http.postJson(fleet.url("/v1/completions"),
                    ObservabilityFleet.completion(ObservabilityFleet.MODEL, "retry me", 4));
            assertThat(response.getStatus()).isEqualTo(200);
        } finally {
            fleet.workers.forEach(w -> w.handler().injectFailures(503, 0));
        }
        SpanData ingress = awaitSpan(s -> s.getName().equals("kvroute.request"));
        await().atMost(Duration.ofSeconds(10)).until(() -> children(ingress, "kvroute.upstream").size() == 3);
        List<SpanData> attempts = children(ingress, "kvroute.upstream").stream()
                .sorted(java.util.Comparator.comparingLong(SpanData::getStartEpochNanos)).toList();
        assertThat(attempts).extracting(s -> tag(s, "retry")).containsExactly("0", "1", "2");
        assertThat(attempts).extracting(s -> tag(s, "outcome")).containsExactly("status_503", "status_503", "ok");
        assertThat(children(ingress, "kvroute.select")).hasSize(3);
        for (SpanData attempt : attempts) {
            assertEngineTree(attempt, tag(attempt, "outcome").equals("ok"));
        }
    }

    @Test
    void failingWorker_receivesTheTraceparentOfItsUpstreamSpan() throws Exception {
        assertThat(http.postJson(fleet.url("/v1/completions"),
                ObservabilityFleet.completion(ObservabilityFleet.BROKEN_MODEL, "doomed", 4)).getStatus()).isEqualTo(503);
        SpanData ingress = awaitSpan(s -> s.getName().equals("kvroute.request"));
        SpanData last = children(ingress, "kvroute.upstream").stream()
                .max(java.util.Comparator.comparingLong(SpanData::getStartEpochNanos)).orElseThrow();
        // flags: sampled, plus the W3C level-2 random-trace-id bit the SDK sets on new traces
        assertThat(fleet.failing.lastTraceparent).matches("00-" + ingress.getTraceId() + "-" + last.getSpanId() + "-0[13]");
        assertThat(tag(ingress, "status")).isEqualTo("503");
    }

    @Test
    void pdRequest_tracesBothLegsOfEverySegment_intoBothWorkers() throws Exception {
        assertThat(http.stream(fleet.url("/v1/completions"), "{\"model\":\"" + ObservabilityFleet.PD_MODEL
                + "\",\"stream\":true,\"max_tokens\":12,\"prompt\":\"pd trace\"}").get().status()).isEqualTo(200);
        SpanData ingress = awaitSpan(s -> s.getName().equals("kvroute.request"));
        SpanData first = child(ingress, "kvroute.pd.segment");
        await().atMost(Duration.ofSeconds(10)).until(() -> children(ingress, "kvroute.pd.continuation").size() == 2);
        List<SpanData> segments = new java.util.ArrayList<>(List.of(first));
        segments.addAll(children(ingress, "kvroute.pd.continuation"));
        assertThat(segments).extracting(s -> tag(s, "segment")).containsExactlyInAnyOrder("0", "1", "2");
        for (SpanData segment : segments) {
            SpanData prefill = child(segment, "kvroute.upstream.prefill");
            SpanData decode = child(segment, "kvroute.upstream.decode");
            assertThat(tag(prefill, "worker")).isEqualTo(fleet.prefill.baseUrl());
            assertThat(tag(decode, "worker")).isEqualTo(fleet.decode.baseUrl());
            assertEngineTree(prefill, true);
            assertEngineTree(decode, true);
        }
        SpanData select = child(ingress, "kvroute.select");
        assertThat(tag(select, "prefill_worker")).isEqualTo(fleet.prefill.baseUrl());
        assertThat(tag(select, "worker")).isEqualTo(fleet.decode.baseUrl());
    }

    /** The worker's request span is a child of {@code upstream}; with an engine run, it has queue/prefill/decode children. */
    private static void assertEngineTree(SpanData upstream, boolean engineRan) {
        SpanData engine = child(upstream, "engine.request");
        assertThat(engine.getKind()).isEqualTo(SpanKind.SERVER);
        assertThat(engine.getTraceId()).isEqualTo(upstream.getTraceId());
        if (engineRan) {
            SpanData queue = child(engine, "engine.queue");
            SpanData prefill = child(engine, "engine.prefill");
            SpanData decode = child(engine, "engine.decode");
            assertThat(queue.getEndEpochNanos()).isLessThanOrEqualTo(prefill.getStartEpochNanos());
            assertThat(prefill.getEndEpochNanos()).isLessThanOrEqualTo(decode.getStartEpochNanos());
        }
    }

    private static SpanData awaitSpan(Predicate<SpanData> match) {
        await().atMost(Duration.ofSeconds(10)).until(() -> SPANS.getFinishedSpanItems().stream().anyMatch(match));
        List<SpanData> found = SPANS.getFinishedSpanItems().stream().filter(match).toList();
        assertThat(found).hasSize(1);
        return found.get(0);
    }

    private static SpanData child(SpanData parent, String name) {
        await().atMost(Duration.ofSeconds(10)).until(() -> !children(parent, name).isEmpty());
        List<SpanData> found = children(parent, name);
        assertThat(found).as("children %s of %s", name, parent.getName()).hasSize(1);
        return found.get(0);
    }

    private static List<SpanData> children(SpanData parent, String name) {
        return SPANS.getFinishedSpanItems().stream()
                .filter(s -> s.getName().equals(name) && s.getParentSpanId().equals(parent.getSpanId())).toList();
    }

    private static String tag(SpanData span, String key) {
        Object value = span.getAttributes().get(AttributeKey.stringKey(key));
        if (value == null) {
            value = span.getAttributes().get(AttributeKey.longKey(key));
        }
        return value == null ? null : value.toString();
    }
}
