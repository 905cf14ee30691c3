package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkerRegistryTest {

    @Test
    void changes_publishNewSnapshotsAndNotifyOnlyOnRealChange() {
        WorkerRegistry registry = new WorkerRegistry();
        List<WorkerRegistry.Change> seen = new ArrayList<>();
        registry.addListener(seen::add);
        Worker a = Worker.regular("http://a:1/");
        assertThat(a.url()).isEqualTo("http://a:1");
        assertThat(a.id()).isEqualTo(Worker.idFor("http://a:1")).matches("w-[0-9a-f]{12}");
        assertThat(registry.add(a)).isTrue();
        assertThat(registry.add(a)).isFalse();
        WorkerRegistry.Fleet before = registry.fleet();
        registry.setHealthy(a.id(), true); // already healthy: no-op
        assertThat(registry.fleet()).isSameAs(before);
        registry.setHealthy(a.id(), false);
        assertThat(registry.fleet().routable()).isEmpty();
        assertThat(before.routable()).containsExactly(a); // old snapshots never change
        registry.update(a.id(), w -> w.withModelId("m"));
        assertThat(registry.get(a.id()).orElseThrow().modelId()).isEqualTo("m");
        assertThat(registry.remove(a.id())).isPresent();
        assertThat(registry.remove(a.id())).isEmpty();
        assertThat(seen).extracting(WorkerRegistry.Change::kind).containsExactly(
                WorkerRegistry.ChangeKind.ADDED, WorkerRegistry.ChangeKind.HEALTH, WorkerRegistry.ChangeKind.UPDATED,
                WorkerRegistry.ChangeKind.REMOVED);
    }

    @Test
    void awaitFleet_wakesOnTheChangeThatMeetsTheCondition_timesOutOtherwise_andUnsubscribes() throws Exception {
        WorkerRegistry registry = new WorkerRegistry();
        Worker a = Worker.regular("http://a:1");
        registry.add(a);
        java.util.function.Predicate<WorkerRegistry.Fleet> hasModel =
                f -> f.all().stream().allMatch(w -> "m".equals(w.modelId()));
        assertThat(registry.awaitFleet(hasModel, java.time.Duration.ofMillis(50))).isFalse();
        java.util.concurrent.CompletableFuture<Boolean> waiting = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return registry.awaitFleet(hasModel, java.time.Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        registry.setHealthy(a.id(), false); // a change that does not meet the condition
        registry.update(a.id(), w -> w.withModelId("m"));
        assertThat(waiting.get(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(registry.awaitFleet(hasModel, java.time.Duration.ZERO)).isTrue(); // already holds
        List<WorkerRegistry.Change> seen = new ArrayList<>();
        registry.addListener(seen::add);
        registry.remove(a.id());
        assertThat(seen).hasSize(1); // the waiters' listeners were removed; only this one remains
    }

    @Test
    void inFlight_neverGoesNegative() {
        InFlightCounters counters = new InFlightCounters();
        counters.acquire("w");
        counters.release("w");
        counters.release("w");
        assertThat(counters.get("w")).isZero();
    }
}
