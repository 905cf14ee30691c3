package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.PdSettings;
import io.kvroute.router.config.RetrySettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.dispatch.PdAttemptState.Phase;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every path of a PD request through its attempts, on the fake clock with a scripted upstream and a recording
 * client: what the client gets, which calls are aborted, what is retried and when, and that the request ends
 * exactly once whatever races it.
 */
class PdAttemptPathsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHUNK = "data: {\"choices\":[{\"text\":\"ab\"}]}\n\n";

    private final Worker prefillA = Worker.of("http://pa:1", WorkerRole.PREFILL, 9000);
    private final Worker prefillB = Worker.of("http://pb:1", WorkerRole.PREFILL, 9000);
    private final Worker decode = Worker.of("http://d:1", WorkerRole.DECODE, null);

    private static RouterConfig config(int maxAttempts, double busyWindowSecs) {
        return RouterConfig.builder().workerUrls(List.of())
                .retry(SettingsBinder.parse(RetrySettings.class, "--retry-max-attempts=" + maxAttempts))
                .pd(SettingsBinder.parse(PdSettings.class, "--pd-busy-retry-timeout-secs=" + busyWindowSecs)).build();
    }

    /** One PD request on a fixture. */
    private final class Run {
        final CoreFixture f;
        final CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        final PdDispatch dispatch;

        Run(RouterConfig config, boolean streaming) throws Exception {
            f = new CoreFixture(config);
            String body = "{\"prompt\":\"hi\",\"max_tokens\":4" + (streaming ? ",\"stream\":true}" : "}");
            Route route = new Route(ApiKind.COMPLETIONS, body.getBytes(StandardCharsets.UTF_8), streaming, 1, null,
                    f.deps.loads().snapshot(), new RouteHints(null, null, "default"), () -> List.of(decode));
            dispatch = new PdDispatch(f.deps, f.pd, route, (ObjectNode) JSON.readTree(body), () -> List.of(prefillA, prefillB),
                    () -> List.of(decode), client, f.clock.nanoTime());
            dispatch.start();
        }

        CoreFixture.Sent prefill(int attempt) {
            CoreFixture.Sent call = f.upstream.sent.get(2 * attempt);
            assertThat(call.request.hop()).isEqualTo(Failure.Hop.PREFILL);
            return call;
        }

        CoreFixture.Sent decode(int attempt) {
            CoreFixture.Sent call = f.upstream.sent.get(2 * attempt + 1);
            assertThat(call.request.hop()).isEqualTo(Failure.Hop.DECODE);
            return call;
        }

        int attempts() {
            return f.upstream.sent.size() / 2;
        }

        Phase phase() {
            return dispatch.currentAttempt().state().phase();
        }

        void clientLeaves() {
            client.gone.accept(new IOException("client went away"));
        }

        RequestOutcome outcome() {
            assertThat(f.outcomes).hasSize(1);
            assertThat(client.terminalCalls()).isEqualTo(1);
            assertThat(f.active).as("removed from the in-flight requests").isEmpty();
            return f.outcomes.get(0);
        }

        double upstreamErrors(Worker worker) {
            return f.metrics.registry().find("kvroute.upstream.errors").tag("worker", worker.url()).counters().stream()
                    .mapToDouble(Counter::count).sum();
        }

        void assertNothingInFlight() {
            for (Worker w : List.of(prefillA, prefillB, decode)) {
                assertThat(f.deps.inFlight().get(w.id())).as(w.url()).isZero();
            }
        }
    }

    private static void ok(CoreFixture.Sent call, String contentType, String body) {
        call.headers(200, contentType);
        call.chunk(body);
        call.complete(200);
    }

    private static void answer(CoreFixture.Sent call, int status, String body) {
        call.headers(status, "application/json");
        call.chunk(body);
        call.complete(status);
    }

    @Test
    void prefillOkThenDecodeOk_streamsTheDecodeOutput_andEndsOnce() throws Exception {
        Run run = new Run(config(3, 0), true);
        assertThat(run.attempts()).isEqualTo(1);
        ok(run.prefill(0), "application/json", "{}");
        assertThat(run.phase()).isEqualTo(Phase.PREFILLED);
        CoreFixture.Sent toDecode = run.decode(0);
        toDecode.headers(200, "text/event-stream");
        toDecode.chunk(CHUNK);
        assertThat(run.client.status).isEqualTo(200);
        assertThat(run.client.headers).containsEntry(Headers.DECODE_URL, decode.url());
        toDecode.chunk("data: [DONE]\n\n");
        toDecode.complete(200);
        assertThat(run.phase()).isEqualTo(Phase.DECODED);
        assertThat(run.client.text()).contains("\"text\":\"ab\"").endsWith("data: [DONE]\n\n");
        assertThat(run.outcome().label()).isEqualTo("ok");
        assertThat(run.prefill(0).aborted).isNull();
        run.assertNothingInFlight();
    }

    @Test
    void nonStreaming_decodeBodyIsTheAnswer_evenWhenThePrefillAnswersLast() throws Exception {
        Run run = new Run(config(3, 0), false);
        ok(run.decode(0), "application/json", "{\"choices\":[{\"text\":\"hello\",\"finish_reason\":\"stop\"}]}");
        assertThat(run.client.status).isEqualTo(200);
        assertThat(run.client.text()).contains("hello");
        assertThat(run.prefill(0).aborted).as("a decoded segment leaves its prefill alone").isNull();
        run.prefill(0).fail(0, new IOException("reset late"));
        assertThat(run.outcome().label()).isEqualTo("ok");
        run.assertNothingInFlight();
    }

    @Test
    void prefillBusy_isRetriedOnANewPairEveryBackoffUntilTheBusyWindowCloses_thenRelayedWithRetryAfter() throws Exception {
        Run run = new Run(config(3, 0.2), false);
        for (int attempt = 0; run.attempts() == attempt + 1; attempt++) {
            answer(run.prefill(attempt), 429, "{\"error\":{\"message\":\"busy\"}}");
            assertThat(run.decode(attempt).aborted).as("the decode side of a busy prefill is aborted").isNotNull();
            run.f.clock.forwardMillis(50); // the PD backoff
        }
        // arrival at t0; attempts at 0, 50, 100, 150 ms are inside the 200 ms window; the one failing at 200 ms is not
        assertThat(run.attempts()).isEqualTo(5);
        assertThat(run.client.status).isEqualTo(429);
        assertThat(run.client.headers).containsEntry("Retry-After", "1");
        assertThat(run.outcome().label()).isEqualTo("busy");
        assertThat(run.upstreamErrors(prefillA) + run.upstreamErrors(prefillB)).as("busy is not an upstream error").isZero();
        run.assertNothingInFlight();
    }

    @Test
    void prefillUnreachable_beforeTheFirstByte_isRetriedOnANewPair_andTheRetryCanSucceed() throws Exception {
        Run run = new Run(config(3, 0), false);
        run.prefill(0).fail(0, new ConnectException("refused"));
        assertThat(run.phase()).isEqualTo(Phase.PREFILL_FAILED);
        assertThat(run.decode(0).aborted).isNotNull();
        assertThat(run.upstreamErrors(prefillA) + run.upstreamErrors(prefillB)).isEqualTo(1);
        run.f.clock.forwardMillis(49);
        assertThat(run.attempts()).isEqualTo(1);
        run.f.clock.forwardMillis(1);
        assertThat(run.attempts()).isEqualTo(2);
        ok(run.prefill(1), "application/json", "{}");
        ok(run.decode(1), "application/json", "{\"choices\":[{\"text\":\"x\",\"finish_reason\":\"stop\"}]}");
        assertThat(run.client.status).isEqualTo(200);
        RequestOutcome outcome = run.outcome();
        assertThat(outcome.label()).isEqualTo("ok");
        assertThat(outcome.attempts()).isEqualTo(2);
        run.assertNothingInFlight();
    }

    @Test
    void prefillUnreachable_onEveryAttempt_endsWith502_afterMaxAttempts() throws Exception {
        Run run = new Run(config(2, 0), true);
        run.prefill(0).fail(0, new ConnectException("refused"));
        run.f.clock.forwardMillis(50);
        run.prefill(1).fail(0, new ConnectException("refused"));
        run.f.clock.forwardMillis(1_000);
        assertThat(run.attempts()).isEqualTo(2);
        assertThat(run.client.status).isEqualTo(502);
        assertThat(run.client.text()).contains("prefill worker");
        assertThat(run.outcome().label()).isEqualTo("connect");
        run.assertNothingInFlight();
    }

    @Test
    void prefill4xx_isRelayedVerbatim_withoutRetry() throws Exception {
        Run run = new Run(config(3, 0), false);
        answer(run.prefill(0), 400, "{\"error\":{\"message\":\"bad sampling params\"}}");
        run.f.clock.forwardMillis(1_000);
        assertThat(run.attempts()).isEqualTo(1);
        assertThat(run.decode(0).aborted).isNotNull();
        assertThat(run.client.status).isEqualTo(400);
        assertThat(run.client.text()).isEqualTo("{\"error\":{\"message\":\"bad sampling params\"}}");
        assertThat(run.outcome().label()).isEqualTo("prefill_400");
    }

    @Test
    void prefillFailure_afterDecodeOutputWasStreamed_endsWithAnSseErrorEvent_notARetry() throws Exception {
        Run run = new Run(config(3, 0), true);
        run.decode(0).headers(200, "text/event-stream");
        run.decode(0).chunk(CHUNK);
        run.prefill(0).fail(0, new IOException("reset"));
        run.f.clock.forwardMillis(1_000);
        assertThat(run.attempts()).isEqualTo(1);
        assertThat(run.client.status).isEqualTo(200);
        assertThat(run.client.text()).contains("\"text\":\"ab\"").contains("\"error\"");
        assertThat(run.outcome().label()).isEqualTo("reset");
    }

    @Test
    void decodeReset_beforeTheFirstByte_isRetried_andTheAbortedPrefillIsNotBlamedOnItsWorker() throws Exception {
        Run run = new Run(config(3, 0), false);
        Worker firstPrefill = run.dispatch.currentAttempt().prefillWorker;
        run.decode(0).fail(0, new IOException("connection reset"));
        assertThat(run.phase()).isEqualTo(Phase.DECODE_FAILED);
        assertThat(run.prefill(0).aborted).as("the prefill of a failed decode is aborted").isNotNull();
        assertThat(run.upstreamErrors(firstPrefill)).as("the router's own abort").isZero();
        assertThat(run.upstreamErrors(decode)).isEqualTo(1);
        run.f.clock.forwardMillis(50);
        assertThat(run.attempts()).isEqualTo(2);
        ok(run.prefill(1), "application/json", "{}");
        ok(run.decode(1), "application/json", "{\"choices\":[{\"text\":\"x\",\"finish_reason\":\"stop\"}]}");
        assertThat(run.outcome().label()).isEqualTo("ok");
        run.assertNothingInFlight();
    }

    @Test
    void decode503_onTheLastAttempt_isRelayed_andAfterStreamingIsAnSseError() throws Exception {
        Run relayed = new Run(config(1, 0), false);
        answer(relayed.decode(0), 503, "{\"error\":{\"message\":\"overloaded\"}}");
        assertThat(relayed.client.status).isEqualTo(503);
        assertThat(relayed.client.text()).contains("overloaded");
        assertThat(relayed.outcome().label()).isEqualTo("decode_503");

        Run midStream = new Run(config(3, 0), true);
        midStream.decode(0).headers(200, "text/event-stream");
        midStream.decode(0).chunk(CHUNK);
        midStream.decode(0).fail(200, new IOException("reset mid-stream"));
        midStream.f.clock.forwardMillis(1_000);
        assertThat(midStream.attempts()).as("output was streamed: never replayed").isEqualTo(1);
        assertThat(midStream.client.text()).contains("\"text\":\"ab\"").contains("\"error\"");
        assertThat(midStream.outcome().label()).isEqualTo("reset");
    }

    @Test
    void clientLeaving_whileBothCallsRun_abortsOnlyTheDecode_andEndsOnceWithNothingWritten() throws Exception {
        Run run = new Run(config(3, 0), true);
        run.clientLeaves();
        assertThat(run.phase()).isEqualTo(Phase.CLIENT_GONE);
        assertThat(run.decode(0).aborted).isNotNull();
        assertThat(run.prefill(0).aborted).as("the prefill keeps going: its KV transfer").isNull();
        assertThat(run.outcome().label()).isEqualTo("client_gone");
        assertThat(run.client.calls).doesNotContain("write", "end");
        ok(run.prefill(0), "application/json", "{}");
        run.f.clock.forwardMillis(1_000);
        assertThat(run.f.outcomes).hasSize(1);
        run.assertNothingInFlight();
    }

    @Test
    void clientLeaving_afterThePrefillAnswered_orAfterOutputStreamed_endsOnceAsClientGone() throws Exception {
        Run prefilled = new Run(config(3, 0), true);
        ok(prefilled.prefill(0), "application/json", "{}");
        prefilled.clientLeaves();
        assertThat(prefilled.decode(0).aborted).isNotNull();
        assertThat(prefilled.outcome().label()).isEqualTo("client_gone");

        Run streaming = new Run(config(3, 0), true);
        streaming.decode(0).headers(200, "text/event-stream");
        streaming.decode(0).chunk(CHUNK);
        streaming.clientLeaves();
        assertThat(streaming.decode(0).aborted).isNotNull();
        assertThat(streaming.prefill(0).aborted).isNull();
        assertThat(streaming.outcome().label()).isEqualTo("client_gone");
        streaming.prefill(0).fail(0, new IOException("late"));
        assertThat(streaming.f.outcomes).hasSize(1);
        streaming.assertNothingInFlight();
    }

    @Test
    void clientLeaving_duringARetryBackoff_sendsNoFurtherAttempt() throws Exception {
        Run run = new Run(config(3, 0), true);
        run.prefill(0).fail(0, new ConnectException("refused"));
        run.clientLeaves();
        run.f.clock.forwardMillis(1_000);
        assertThat(run.attempts()).as("no prefill sent for nobody").isEqualTo(1);
        assertThat(run.outcome().label()).isEqualTo("client_gone");
        run.assertNothingInFlight();
    }

    @Test
    void clientLeaving_afterTheAnswer_changesNothing() throws Exception {
        Run run = new Run(config(3, 0), false);
        ok(run.decode(0), "application/json", "{\"choices\":[{\"text\":\"x\",\"finish_reason\":\"stop\"}]}");
        run.clientLeaves();
        assertThat(run.outcome().label()).isEqualTo("ok");
    }

    @Test
    void shutdown_abortsBothCalls_answers503Once_andTheAbortedPrefillIsNotBlamed() throws Exception {
        Run run = new Run(config(3, 0), true);
        Worker prefill = run.dispatch.currentAttempt().prefillWorker;
        run.dispatch.abort("router shutting down");
        assertThat(run.phase()).isEqualTo(Phase.ABANDONED);
        assertThat(run.prefill(0).aborted).isNotNull();
        assertThat(run.decode(0).aborted).isNotNull();
        assertThat(run.client.status).isEqualTo(503);
        assertThat(run.outcome().label()).isEqualTo("shutdown");
        assertThat(run.upstreamErrors(prefill)).isZero();
        run.f.clock.forwardMillis(1_000);
        assertThat(run.attempts()).isEqualTo(1);
        run.assertNothingInFlight();
    }

    @Test
    void shutdown_duringARetryBackoff_sendsNoFurtherAttempt() throws Exception {
        Run run = new Run(config(3, 0), false);
        run.decode(0).fail(0, new IOException("reset"));
        run.dispatch.abort("router shutting down");
        run.f.clock.forwardMillis(1_000);
        assertThat(run.attempts()).isEqualTo(1);
        assertThat(run.outcome().label()).isEqualTo("shutdown");
    }

    private static List<List<String>> permutations(List<String> items) {
        if (items.isEmpty()) {
            return List.of(List.of());
        }
        List<List<String>> out = new java.util.ArrayList<>();
        for (String first : items) {
            List<String> rest = new java.util.ArrayList<>(items);
            rest.remove(first);
            for (List<String> tail : permutations(rest)) {
                List<String> order = new java.util.ArrayList<>();
                order.add(first);
                order.addAll(tail);
                out.add(order);
            }
        }
        return out;
    }

    /** Four endings racing on one attempt, in all 24 orders: the request ends exactly once. */
    @Test
    void racingEndings_endTheRequestExactlyOnce_inEveryOrder() throws Exception {
        for (List<String> order : permutations(List.of("prefill", "decode", "gone", "abort"))) {
            Run run = new Run(config(3, 1.0), true);
            for (String ending : order) {
                switch (ending) {
                    case "prefill" -> {
                        if (run.prefill(0).aborted == null) {
                            run.prefill(0).fail(0, new IOException("reset"));
                        }
                    }
                    case "decode" -> {
                        if (run.decode(0).aborted == null) {
                            answer(run.decode(0), 429, "{}");
                        }
                    }
                    case "gone" -> run.clientLeaves();
                    default -> run.dispatch.abort("router shutting down");
                }
            }
            run.f.clock.forwardMillis(2_000);
            assertThat(run.f.outcomes).as("%s", order).hasSize(1);
            assertThat(run.client.terminalCalls()).as("%s", order).isEqualTo(1);
            assertThat(run.attempts()).as("%s: nothing retried once ended", order).isEqualTo(1);
        }
    }
}
