package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.RetrySettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.policy.CacheAwareDetail;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.DecisionReason;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A cache-aware decision makes its worker the prompt's owner only once that worker has accepted the request
 * (a 2xx status line): an unreachable or failing worker never becomes the owner, on the plain and the PD path.
 */
class OwnershipOnAcceptTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final Worker a = Worker.regular("http://a:1");
    private final Worker b = Worker.regular("http://b:1");
    private final Worker prefillA = Worker.of("http://pa:1", WorkerRole.PREFILL, 9000);
    private final Worker prefillB = Worker.of("http://pb:1", WorkerRole.PREFILL, 9000);
    private final Worker decode = Worker.of("http://d:1", WorkerRole.DECODE, null);

    /** Picks the first candidate and says so as a cache hit, the way cache_aware's decisions look. */
    private static final RoutingPolicy FIRST_AS_CACHE_HIT = new RoutingPolicy() {
        @Override
        public String name() {
            return "cache_aware";
        }

        @Override
        public Decision select(RoutingRequest request) {
            return new Decision(request.candidates().get(0), DecisionReason.ROUND_ROBIN, Decision.SOURCE_NONE,
                    new CacheAwareDetail(CacheAwareDetail.CACHE_HIT, 0, 0, 0, 10, 10, null, false));
        }
    };

    private static RouterConfig config() {
        return RouterConfig.builder().workerUrls(List.of("http://a:1")).retry(SettingsBinder.parse(RetrySettings.class,
                        "--retry-max-attempts=3", "--retry-initial-backoff-ms=100", "--retry-backoff-multiplier=2",
                        "--retry-max-backoff-ms=10000", "--retry-jitter=0")).build();
    }

    @Test
    void plain_unreachableWorkerIsNeverTheOwner_theWorkerThatAnsweredIs() {
        CoreFixture f = new CoreFixture(config(), FIRST_AS_CACHE_HIT);
        new Dispatch(f.deps, f.plain, f.route(false, a, b), new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        f.upstream.sent.get(0).fail(0, new ConnectException("refused"));
        assertThat(f.owned).as("a connect failure records nothing").isEmpty();

        f.clock.forwardMillis(100);
        CoreFixture.Sent retry = f.upstream.sent.get(1);
        assertThat(retry.request.url()).startsWith(b.url());
        retry.headers(200, "application/json");
        retry.chunk("{}");
        retry.complete(200);
        assertThat(f.owned).singleElement().extracting(Decision::worker).isEqualTo(b);
    }

    @Test
    void plain_anErrorStatusRecordsNothing_andASuccessRecordsOnce() {
        CoreFixture f = new CoreFixture(config(), FIRST_AS_CACHE_HIT);
        new Dispatch(f.deps, f.plain, f.route(false, a), new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        CoreFixture.Sent call = f.upstream.sent.get(0);
        call.headers(400, "application/json");
        call.chunk("{\"error\":{}}");
        call.complete(400);
        assertThat(f.owned).isEmpty();

        new Dispatch(f.deps, f.plain, f.route(true, a), new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        CoreFixture.Sent ok = f.upstream.sent.get(1);
        ok.headers(200, "text/event-stream");
        ok.chunk("data: {}\n\n");
        ok.chunk("data: [DONE]\n\n");
        ok.complete(200);
        assertThat(f.owned).singleElement().extracting(Decision::worker).isEqualTo(a);
    }

    @Test
    void pd_theOwnerIsThePrefillWorkerOnceItAnswers_notOneThatWasUnreachable() throws Exception {
        CoreFixture f = new CoreFixture(RouterConfig.builder().workerUrls(List.of()).build(), FIRST_AS_CACHE_HIT);
        String body = "{\"prompt\":\"hi\",\"max_tokens\":4}";
        Route route = new Route(ApiKind.COMPLETIONS, body.getBytes(StandardCharsets.UTF_8), false, 1, null,
                f.deps.loads().snapshot(), new RouteHints(null, null, "default"), () -> List.of(decode));
        new PdDispatch(f.deps, f.pd, route, (ObjectNode) JSON.readTree(body), () -> List.of(prefillA), () -> List.of(decode),
                new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        assertThat(f.upstream.sent).hasSize(2); // prefill + decode, concurrently
        f.upstream.sent.get(0).fail(0, new ConnectException("refused"));
        assertThat(f.owned).as("the decision is not recorded before the prefill worker answered").isEmpty();

        new PdDispatch(f.deps, f.pd, route, (ObjectNode) JSON.readTree(body), () -> List.of(prefillB), () -> List.of(decode),
                new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        CoreFixture.Sent toPrefill = f.upstream.sent.stream().filter(s -> s.request.url().startsWith(prefillB.url()))
                .findFirst().orElseThrow();
        toPrefill.headers(200, "application/json");
        assertThat(f.owned).singleElement().extracting(Decision::worker).isEqualTo(prefillB);
        toPrefill.chunk("{}");
        toPrefill.complete(200);
        assertThat(f.owned).hasSize(1);
    }
}
