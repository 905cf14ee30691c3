package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.RetrySettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.policy.CacheAwareDetail;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.DecisionReason;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a vLLM worker receives: the client's body without the router's {@code input_ids} (vLLM drops
 * them on chat and renders the messages itself), counted as {@code engine_unsupported} per attempt,
 * and the exact index's dp rank as {@code X-data-parallel-rank}; an SGLang worker keeps both the ids
 * and its own DP placement.
 */
class VllmRequestShapeTest {

    private static final byte[] CLIENT = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
            .getBytes(StandardCharsets.UTF_8);
    private static final byte[] WITH_IDS = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"input_ids\":[1,2]}"
            .getBytes(StandardCharsets.UTF_8);

    private static RouterConfig config() {
        return RouterConfig.builder().workerUrls(List.of("http://a:1")).retry(SettingsBinder.parse(RetrySettings.class,
                        "--retry-max-attempts=2", "--retry-initial-backoff-ms=100", "--retry-jitter=0")).build();
    }

    /** Picks the first untried candidate, as cache_aware would with the exact index's rank 1 on it. */
    private static RoutingPolicy pinning(int rank) {
        return new RoutingPolicy() {
            @Override
            public String name() {
                return "cache_aware";
            }

            @Override
            public Decision select(RoutingRequest request) {
                return new Decision(request.candidates().get(0), DecisionReason.CACHE_PRIMARY, Decision.SOURCE_NONE,
                        new CacheAwareDetail(CacheAwareDetail.CACHE_HIT, 0, 0, 0, 32, 32, null, false,
                                CacheAwareDetail.INDEX_EXACT, rank));
            }
        };
    }

    private static Route chat(List<Worker> pool) {
        return new Route(ApiKind.CHAT, WITH_IDS, false, 2, new int[] {1, 2}, null,
                new RouteHints(null, null, "m"), () -> pool, CLIENT);
    }

    private static double engineUnsupported(CoreFixture f) {
        var c = f.metrics.registry().find("kvroute.input.ids.forwarding").tag("outcome", "engine_unsupported").counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void vllmWorker_getsTheClientBodyAndTheRankHeader_onEveryAttempt() {
        Worker v1 = Worker.regular("http://v1:1").withEngine(EngineType.VLLM);
        Worker v2 = Worker.regular("http://v2:1").withEngine(EngineType.VLLM);
        CoreFixture f = new CoreFixture(config(), pinning(1));
        new Dispatch(f.deps, f.plain, chat(List.of(v1, v2)), new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        UpstreamRequest first = f.upstream.sent.get(0).request;
        assertThat(first.body()).isEqualTo(CLIENT);
        assertThat(first.headers()).containsEntry(UpstreamRequests.DATA_PARALLEL_RANK, "1");
        assertThat(engineUnsupported(f)).isEqualTo(1);

        f.upstream.sent.get(0).fail(0, new ConnectException("refused"));
        f.clock.forwardMillis(100);
        UpstreamRequest retry = f.upstream.sent.get(1).request;
        assertThat(retry.url()).startsWith("http://v2:1");
        assertThat(retry.body()).isEqualTo(CLIENT);
        assertThat(engineUnsupported(f)).isEqualTo(2);
    }

    @Test
    void sglangWorker_keepsTheRouterIds_andNoRankHeaderWithoutAPin() {
        Worker s = Worker.regular("http://s:1").withEngine(EngineType.SGLANG);
        CoreFixture f = new CoreFixture(config(), pinning(-1));
        new Dispatch(f.deps, f.plain, chat(List.of(s)), new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        UpstreamRequest sent = f.upstream.sent.get(0).request;
        assertThat(sent.body()).isEqualTo(WITH_IDS);
        assertThat(sent.headers()).doesNotContainKey(UpstreamRequests.DATA_PARALLEL_RANK);
        assertThat(engineUnsupported(f)).isZero();
    }
}
