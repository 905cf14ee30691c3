package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.PdSettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** PdDispatch on the core alone: busy window on the fake clock, the upstream hook on every hop. */
class PdDispatchTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Worker prefill = Worker.of("http://p:1", WorkerRole.PREFILL, 9000);
    private final Worker decode = Worker.of("http://d:1", WorkerRole.DECODE, null);

    private static RouterConfig config(double busyWindowSecs) {
        return RouterConfig.builder().workerUrls(List.of()).pd(SettingsBinder.parse(PdSettings.class,
                "--pd-busy-retry-timeout-secs=" + busyWindowSecs)).build();
    }

    private PdDispatch start(CoreFixture f, CoreFixture.RecordingSink client) throws Exception {
        String body = "{\"prompt\":\"hi\",\"max_tokens\":4}";
        ObjectNode tree = (ObjectNode) JSON.readTree(body);
        Route route = new Route(ApiKind.COMPLETIONS, body.getBytes(StandardCharsets.UTF_8), false, 1, null,
                f.deps.loads().snapshot(), new RouteHints(null, null, "default"), () -> List.of(decode));
        PdDispatch dispatch = new PdDispatch(f.deps, f.pd, route, tree, () -> List.of(prefill), () -> List.of(decode), client,
                f.clock.nanoTime());
        dispatch.start();
        return dispatch;
    }

    /** Under per-worker QoS capacity the decode worker holds the tokens and the prefill worker is where the prompt's cache is. */
    @Test
    void withAWorkerRoom_theDecodeWorkerIsPlaced_andThePrefillWorkerNamedAsThePromptsCache() throws Exception {
        CoreFixture f = new CoreFixture(config(0));
        List<String> calls = new CopyOnWriteArrayList<>();
        WorkerRoom room = new WorkerRoom() {
            @Override
            public java.util.Set<String> placeable() {
                calls.add("placeable");
                return java.util.Set.of(decode.id());
            }

            @Override
            public boolean place(String workerId, boolean force) {
                calls.add("place " + workerId);
                return true;
            }

            @Override
            public void prefixOn(String workerId) {
                calls.add("prefixOn " + workerId);
            }
        };
        String body = "{\"prompt\":\"hi\",\"max_tokens\":4}";
        Route route = new Route(ApiKind.COMPLETIONS, body.getBytes(StandardCharsets.UTF_8), false, 1, null,
                f.deps.loads().snapshot(), new RouteHints(null, null, "default"), () -> List.of(decode));
        new PdDispatch(f.deps, f.pd, route, (ObjectNode) JSON.readTree(body), () -> List.of(prefill), () -> List.of(decode),
                new CoreFixture.RecordingSink(), f.clock.nanoTime(), room).start();
        assertThat(calls).containsExactly("placeable", "place " + decode.id(), "prefixOn " + prefill.id());
        assertThat(f.upstream.sent).hasSize(2);
    }

    private static void busy(CoreFixture.Sent call) {
        call.headers(429, "application/json");
        call.chunk("{\"error\":{\"message\":\"busy\"}}");
        call.complete(429);
    }

    @Test
    void decodeBusy_isRetriedInsideTheWindowAfterTheBackoff_andRelayedWithRetryAfterOnceItCloses() throws Exception {
        CoreFixture f = new CoreFixture(config(1.0));
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        start(f, client);
        assertThat(f.upstream.sent).hasSize(2); // prefill + decode
        busy(f.upstream.sent.get(1));
        f.clock.forwardMillis(49);
        assertThat(f.upstream.sent).as("nothing before the 50 ms PD backoff").hasSize(2);
        f.clock.forwardMillis(1);
        assertThat(f.upstream.sent).hasSize(4);

        f.clock.forwardMillis(1_000); // the window (1 s from arrival) has now closed
        busy(f.upstream.sent.get(3));
        f.clock.forwardMillis(1_000);
        assertThat(f.upstream.sent).as("no retry once the window closed").hasSize(4);
        assertThat(client.status).isEqualTo(429);
        assertThat(client.headers).containsEntry("Retry-After", "1");
        assertThat(client.terminalCalls()).isEqualTo(1);
        assertThat(f.outcomes).singleElement().satisfies(o -> assertThat(o.label()).isEqualTo("busy"));
    }

    @Test
    void decodeBusy_withoutAWindow_goesStraightToTheClient() throws Exception {
        CoreFixture f = new CoreFixture(config(0));
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        start(f, client);
        busy(f.upstream.sent.get(1));
        f.clock.forwardMillis(1_000);
        assertThat(f.upstream.sent).hasSize(2);
        assertThat(client.status).isEqualTo(429);
    }

    @Test
    void upstreamHook_decoratesPrefillDecodeAndRetriedCalls() throws Exception {
        CoreFixture f = new CoreFixture(config(1.0));
        List<UpstreamHook.Target> seen = new CopyOnWriteArrayList<>();
        f.deps.requests().addHook((target, headers) -> {
            seen.add(target);
            headers.put("traceparent", "00-trace-" + target.hop() + "-" + target.attempt());
        });
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        start(f, client);
        busy(f.upstream.sent.get(1));
        f.clock.forwardMillis(50);
        assertThat(f.upstream.sent).hasSize(4);
        assertThat(f.upstream.sent).extracting(s -> s.request.headers().get("traceparent")).containsExactly(
                "00-trace-PREFILL-1", "00-trace-DECODE-1", "00-trace-PREFILL-2", "00-trace-DECODE-2");
        assertThat(seen).extracting(UpstreamHook.Target::worker).containsExactly(prefill, decode, prefill, decode);
    }
}
