package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.LoraConfig;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.lora.AdapterDirectory;
import io.kvroute.router.lora.AdapterLoadClient;
import io.kvroute.router.lora.LoraRouting;
import io.kvroute.router.policy.Policies;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Dynamic loading inside the dispatch: the request waits for its adapter's load, counts in flight on the
 * chosen worker meanwhile, and ends with the router's 502/504 (never sent upstream) when the load fails.
 */
class AdapterLoadDispatchTest {

    private final Worker a = Worker.regular("http://a:1");
    private final List<CompletableFuture<Void>> loads = new CopyOnWriteArrayList<>();

    private CoreFixture fixture() {
        AdapterLoadClient loader = (worker, adapter, path, timeoutMillis) -> {
            CompletableFuture<Void> f = new CompletableFuture<>();
            loads.add(f);
            return f;
        };
        LoraRouting lora = new LoraRouting(new AdapterDirectory(), new LoraConfig(8, true, Map.of("sql", "/l/sql"), 1000, 30),
                loader, new SimpleMeterRegistry(), System::nanoTime);
        RouterConfig config = RouterConfig.builder().workerUrls(List.of("http://a:1")).build();
        return new CoreFixture(config, Policies.create("round_robin", 2), lora);
    }

    private Route route(CoreFixture f) {
        return new Route(ApiKind.COMPLETIONS, "{\"model\":\"sql\",\"prompt\":\"hi\"}".getBytes(StandardCharsets.UTF_8),
                false, 1, null, f.deps.loads().snapshot(), new RouteHints(null, null, "base", "sql"), () -> List.of(a));
    }

    @Test
    void requestWaitsForTheLoad_countedInFlight_thenGoesUpstream() {
        CoreFixture f = fixture();
        new Dispatch(f.deps, f.plain, route(f), new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        assertThat(loads).hasSize(1);
        assertThat(f.upstream.sent).isEmpty();
        assertThat(f.deps.inFlight().get(a.id())).isEqualTo(1);
        loads.get(0).complete(null);
        assertThat(f.upstream.sent).hasSize(1);
        assertThat(f.deps.inFlight().get(a.id())).isEqualTo(1);
        f.upstream.sent.get(0).headers(200, "application/json");
        f.upstream.sent.get(0).complete(200);
        assertThat(f.deps.inFlight().get(a.id())).isZero();
    }

    @Test
    void refusedLoad_is502_neverSentUpstream_andReleasesTheWorker() {
        CoreFixture f = fixture();
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, route(f), client, f.clock.nanoTime()).start();
        loads.get(0).completeExceptionally(new AdapterLoadClient.LoadFailed("worker answered 404: {\"detail\":\"Not Found\"}"));
        assertThat(client.status).isEqualTo(502);
        assertThat(client.text()).contains("could not load adapter 'sql' onto worker http://a:1").contains("404");
        assertThat(f.upstream.sent).isEmpty();
        assertThat(f.deps.inFlight().get(a.id())).isZero();
    }

    @Test
    void timedOutLoad_is504() {
        CoreFixture f = fixture();
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, route(f), client, f.clock.nanoTime()).start();
        loads.get(0).completeExceptionally(new TimeoutException());
        assertThat(client.status).isEqualTo(504);
        assertThat(client.text()).contains("adapter load timeout");
        assertThat(f.deps.inFlight().get(a.id())).isZero();
    }

    @Test
    void abortWhileLoading_is503_andTheLaterLoadSendsNothing() {
        CoreFixture f = fixture();
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        Dispatch d = new Dispatch(f.deps, f.plain, route(f), client, f.clock.nanoTime());
        d.start();
        d.abort("shutting down");
        assertThat(client.status).isEqualTo(503);
        loads.get(0).complete(null);
        assertThat(f.upstream.sent).isEmpty();
        assertThat(f.deps.inFlight().get(a.id())).isZero();
    }
}
