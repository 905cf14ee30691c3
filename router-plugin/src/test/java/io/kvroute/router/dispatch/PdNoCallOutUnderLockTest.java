package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.PdSettings;
import io.kvroute.router.config.RetrySettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.Policies;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * No lock of a PD request is held while it calls out: the policies (which take the prefix index's lock), the
 * upstream (sends and aborts, whose callbacks may run inline), the client sink and the outcome listener each
 * check {@link Thread#holdsLock} on the dispatch and on every attempt it made, and record any violation.
 */
class PdNoCallOutUnderLockTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Worker prefill = Worker.of("http://p:1", WorkerRole.PREFILL, 9000);
    private final Worker decode = Worker.of("http://d:1", WorkerRole.DECODE, null);
    private final AtomicReference<PdDispatch> dispatch = new AtomicReference<>();
    private final List<Object> attempts = new CopyOnWriteArrayList<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<String> checked = new CopyOnWriteArrayList<>();

    private void check(String callOut) {
        checked.add(callOut);
        PdDispatch owner = dispatch.get();
        if (owner == null) {
            return;
        }
        PdAttempt current = owner.currentAttempt();
        if (current != null && !attempts.contains(current)) {
            attempts.add(current);
        }
        if (Thread.holdsLock(owner)) {
            violations.add(callOut + " while holding the dispatch's lock");
        }
        for (Object attempt : attempts) {
            if (Thread.holdsLock(attempt)) {
                violations.add(callOut + " while holding an attempt's lock");
            }
        }
    }

    private RoutingPolicy probing(RoutingPolicy policy) {
        return new RoutingPolicy() {
            @Override
            public String name() {
                return policy.name();
            }

            @Override
            public Decision select(RoutingRequest request) {
                check("policy.select");
                return policy.select(request);
            }
        };
    }

    private final CoreFixture.ScriptedUpstream scripted = new CoreFixture.ScriptedUpstream();

    private Upstream probingUpstream() {
        return (request, listener) -> {
            check("upstream.send");
            Upstream.Call call = scripted.send(request, listener);
            return cause -> {
                check("upstream abort");
                call.abort(cause);
            };
        };
    }

    private final class ProbingSink extends CoreFixture.RecordingSink {
        @Override
        public void begin(int status, Map<String, String> headers) {
            check("client.begin");
            super.begin(status, headers);
        }

        @Override
        public void write(ByteBuffer chunk, Completion done) {
            check("client.write");
            super.write(chunk, done);
        }

        @Override
        public void end(ByteBuffer last) {
            check("client.end");
            super.end(last);
        }

        @Override
        public void abort(Throwable failure) {
            check("client.abort");
            super.abort(failure);
        }
    }

    private PdDispatch start(CoreFixture f, ProbingSink client) throws Exception {
        RoutingPolicy policy = probing(Policies.create("round_robin", 2));
        DispatchDeps d = f.deps;
        DispatchDeps deps = new DispatchDeps(d.inFlight(), d.breakers(), d.metrics(), d.loads(),
                decision -> check("onDispatched"), d.active(), probingUpstream(), d.requests(), d.clock(), d.retry(),
                outcome -> {
                    check("outcome listener");
                    f.outcomes.add(outcome);
                }, d.lora());
        PdRouting routing = new PdRouting(policy, policy, policy, () -> {
            check("rooms");
            return 7L;
        });
        String body = "{\"prompt\":\"hi\",\"max_tokens\":4,\"stream\":true}";
        Route route = new Route(ApiKind.COMPLETIONS, body.getBytes(StandardCharsets.UTF_8), true, 1, null,
                f.deps.loads().snapshot(), new RouteHints(null, null, "default"), () -> List.of(decode));
        PdDispatch pd = new PdDispatch(deps, routing, route, (ObjectNode) JSON.readTree(body), () -> List.of(prefill),
                () -> List.of(decode), client, f.clock.nanoTime());
        dispatch.set(pd);
        pd.start();
        return pd;
    }

    private static RouterConfig config() {
        return RouterConfig.builder().workerUrls(List.of())
                .retry(SettingsBinder.parse(RetrySettings.class, "--retry-max-attempts=3"))
                .pd(SettingsBinder.parse(PdSettings.class, "--pd-busy-retry-timeout-secs=1")).build();
    }

    @Test
    void aRetriedStreamedRequest_callsOutWithNoLockHeld() throws Exception {
        CoreFixture f = new CoreFixture(config());
        ProbingSink client = new ProbingSink();
        start(f, client);
        scripted.sent.get(0).fail(0, new ConnectException("refused")); // prefill fails: decode aborted, retry
        f.clock.forwardMillis(50); // a new pair: the policies are asked again
        assertThat(scripted.sent).hasSize(4);
        CoreFixture.Sent toPrefill = scripted.sent.get(2);
        toPrefill.headers(200, "application/json");
        toPrefill.chunk("{}");
        toPrefill.complete(200);
        CoreFixture.Sent toDecode = scripted.sent.get(3);
        toDecode.headers(200, "text/event-stream");
        toDecode.chunk("data: {\"choices\":[{\"text\":\"ab\"}]}\n\n");
        toDecode.chunk("data: [DONE]\n\n");
        toDecode.complete(200);

        assertThat(f.outcomes).hasSize(1);
        assertThat(checked).contains("policy.select", "upstream.send", "upstream abort", "client.begin", "client.write",
                "client.end", "outcome listener", "rooms");
        assertThat(violations).isEmpty();
    }

    @Test
    void busyDecode_shutdown_andTheClientLeaving_callOutWithNoLockHeld() throws Exception {
        CoreFixture f = new CoreFixture(config());
        start(f, new ProbingSink());
        CoreFixture.Sent busy = scripted.sent.get(1);
        busy.headers(429, "application/json");
        busy.chunk("{}");
        busy.complete(429); // decode busy: prefill aborted, retried after the backoff
        f.clock.forwardMillis(50);
        dispatch.get().abort("router shutting down");

        ProbingSink leaving = new ProbingSink();
        start(f, leaving);
        leaving.gone.accept(new IOException("client went away"));

        assertThat(checked).contains("policy.select", "upstream abort", "client.end", "client.abort", "outcome listener");
        assertThat(violations).isEmpty();
    }
}
