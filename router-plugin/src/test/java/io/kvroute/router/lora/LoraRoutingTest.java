package io.kvroute.router.lora;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.LoraConfig;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class LoraRoutingTest {

    private static final Worker A = new Worker("w-a", "http://a", WorkerRole.REGULAR, "base", null, List.of());
    private static final Worker B = new Worker("w-b", "http://b", WorkerRole.REGULAR, "base", null, List.of());

    /** A loader whose loads the test completes by hand. */
    private static final class ManualLoader implements AdapterLoadClient {
        final List<CompletableFuture<Void>> started = new CopyOnWriteArrayList<>();
        final List<String> calls = new ArrayList<>();

        @Override
        public synchronized CompletableFuture<Void> load(Worker worker, String adapter, String path, long timeoutMillis) {
            calls.add(worker.id() + " " + adapter + " " + path);
            CompletableFuture<Void> f = new CompletableFuture<>();
            started.add(f);
            return f;
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ManualLoader loader = new ManualLoader();
    private final AdapterDirectory dir = new AdapterDirectory();

    private LoraRouting routing(LoraConfig config) {
        return new LoraRouting(dir, config, loader, registry, System::nanoTime);
    }

    private double decisions(String outcome) {
        return registry.get("kvroute.lora.decisions").tag("outcome", outcome).counter().count();
    }

    private double loads(String outcome) {
        return registry.get("kvroute.lora.loads").tag("outcome", outcome).counter().count();
    }

    @Test
    void resolve_modelNamingAListedAdapter_routesOverItsBase() {
        dir.updateCards("w-a", "base", Set.of("sql"));
        LoraRouting r = routing(LoraConfig.DEFAULTS);
        assertThat(r.resolve("sql", null, Set.of("base"))).isEqualTo(new LoraRouting.Resolved("base", "sql"));
        assertThat(r.resolve("base", null, Set.of("base"))).isEqualTo(new LoraRouting.Resolved("base", null));
        assertThat(r.resolve("nope", null, Set.of("base"))).isEqualTo(new LoraRouting.Resolved("nope", null));
        assertThat(r.resolve("base", "/loras/sql", Set.of("base"))).isEqualTo(new LoraRouting.Resolved("base", "/loras/sql"));
    }

    @Test
    void resolve_catalogueAdapter_onlyWithDynamicLoadingAndOneBase() {
        LoraConfig dynamic = new LoraConfig(8, true, Map.of("sql", "/loras/sql"), 1000, 30);
        assertThat(routing(dynamic).resolve("sql", null, Set.of("base")).adapter()).isEqualTo("sql");
        assertThat(routing(dynamic).resolve("sql", null, Set.of("base", "other")).adapter()).isNull();
        assertThat(routing(new LoraConfig(8, false, Map.of("sql", "/x"), 1000, 30)).resolve("sql", null, Set.of("base"))
                .adapter()).isNull();
    }

    @Test
    void candidates_areTheListingWorkers_orAllWhenTheRouterCanLoad() {
        dir.updateCards("w-a", "base", Set.of("sql"));
        dir.updateCards("w-b", "base", Set.of());
        assertThat(routing(LoraConfig.DEFAULTS).candidates(List.of(A, B), "sql")).containsExactly(A);
        assertThat(routing(LoraConfig.DEFAULTS).candidates(List.of(B), "sql")).isEmpty();
        assertThat(routing(LoraConfig.DEFAULTS).candidates(List.of(A, B), "unlisted")).containsExactly(A, B);
        LoraConfig dynamic = new LoraConfig(8, true, Map.of("sql", "/loras/sql"), 1000, 30);
        assertThat(routing(dynamic).candidates(List.of(A, B), "sql")).containsExactly(A, B);
        dir.updateCards("w-b", "base", Set.of("sql"));
        List<Worker> pool = List.of(A, B);
        assertThat(routing(LoraConfig.DEFAULTS).candidates(pool, "sql")).isSameAs(pool); // all list it: no copy
    }

    @Test
    void prepare_loadsOncePerWorkerAndAdapter_whileOthersWait() {
        LoraRouting r = routing(new LoraConfig(8, true, Map.of("sql", "/loras/sql"), 1000, 30));
        CompletableFuture<Void> first = r.prepare(A, "sql");
        CompletableFuture<Void> second = r.prepare(A, "sql");
        CompletableFuture<Void> other = r.prepare(B, "sql");
        assertThat(loader.calls).containsExactly("w-a sql /loras/sql", "w-b sql /loras/sql");
        assertThat(first).isNotDone();
        assertThat(second).isNotDone();
        loader.started.get(0).complete(null);
        assertThat(first).isCompleted();
        assertThat(second).isCompleted();
        assertThat(other).isNotDone();
        assertThat(dir.current().lists("w-a", "sql")).isTrue();
        // listed now: no further load, and the decision counts as resident (the router sent it there last)
        assertThat(r.prepare(A, "sql")).isNull();
        assertThat(loader.calls).hasSize(2);
        assertThat(decisions("loaded")).isEqualTo(3);
        assertThat(decisions("resident")).isEqualTo(1);
        assertThat(loads("ok")).isEqualTo(1);
    }

    @Test
    void prepare_failedLoad_failsItsWaiters_andTheNextRequestTriesAgain() {
        LoraRouting r = routing(new LoraConfig(8, true, Map.of("sql", "/loras/sql"), 1000, 30));
        CompletableFuture<Void> first = r.prepare(A, "sql");
        loader.started.get(0).completeExceptionally(new AdapterLoadClient.LoadFailed("worker answered 500"));
        assertThat(first).isCompletedExceptionally();
        assertThat(dir.current().lists("w-a", "sql")).isFalse();
        CompletableFuture<Void> again = r.prepare(A, "sql");
        assertThat(loader.calls).hasSize(2);
        loader.started.get(1).completeExceptionally(new TimeoutException());
        assertThat(LoraRouting.unwrap(again.handle((ok, f) -> f).join())).isInstanceOf(TimeoutException.class);
        assertThat(loads("failed")).isEqualTo(1);
        assertThat(loads("timeout")).isEqualTo(1);
    }

    @Test
    void prepare_withoutDynamicLoading_onlyCountsAndNotes() {
        dir.updateLoad("w-a", new io.kvroute.router.load.LoraReading(Set.of("x"), Set.of(), 2, -1));
        LoraRouting r = routing(LoraConfig.DEFAULTS);
        assertThat(r.prepare(A, "sql")).isNull(); // room: 1 of 2 slots used
        assertThat(decisions("loaded")).isEqualTo(1);
        assertThat(dir.current().recentOf("w-a")).containsExactly("sql");
        assertThat(r.prepare(A, null)).isNull();
        assertThat(loader.calls).isEmpty();
    }
}
