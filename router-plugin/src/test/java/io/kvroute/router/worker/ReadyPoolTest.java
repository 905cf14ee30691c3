package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.policy.RoutingRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The published pool must answer exactly what the per-request scan it replaces answered: routable
 * (healthy, not draining) workers of the role, serving the model, whose breaker allows traffic, in
 * registry order. Checked against that naive scan after every random fleet and breaker change.
 */
class ReadyPoolTest {

    private static final List<String> MODELS = List.of("m1", "m2");

    @Test
    void eligible_equalsTheNaiveScan_afterEveryRandomChange() {
        Random rnd = new Random(19);
        WorkerRegistry registry = new WorkerRegistry();
        Set<String> open = new HashSet<>();
        Set<String> halfOpenNow = new HashSet<>(); // open at rebuild, but the breaker now lets traffic through
        ReadyPool pool = new ReadyPool();
        List<Worker> known = new ArrayList<>();
        for (int step = 0; step < 1_000; step++) {
            int op = rnd.nextInt(8);
            if (op == 0 || known.isEmpty()) {
                WorkerRole role = WorkerRole.values()[rnd.nextInt(WorkerRole.values().length)];
                Worker w = Worker.of("http://10.0." + rnd.nextInt(4) + "." + rnd.nextInt(60) + ":8000", role,
                        role == WorkerRole.PREFILL && rnd.nextBoolean() ? 9000 : null);
                int model = rnd.nextInt(3);
                if (model < 2) {
                    w = w.withModelId(MODELS.get(model));
                }
                if (registry.add(w)) {
                    known.add(w);
                }
            } else {
                Worker w = known.get(rnd.nextInt(known.size()));
                switch (op) {
                    case 1 -> {
                        registry.remove(w.id());
                        known.remove(w);
                        open.remove(w.id());
                    }
                    case 2 -> registry.setHealthy(w.id(), rnd.nextBoolean());
                    case 3 -> registry.drain(w.id());
                    case 4 -> open.add(w.id());
                    case 5 -> {
                        open.remove(w.id());
                        halfOpenNow.remove(w.id());
                    }
                    case 6 -> halfOpenNow.add(w.id());
                    default -> registry.update(w.id(), x -> x.withRole(x.role(), 9001)); // bootstrap port learned
                }
            }
            pool.rebuild(registry::fleet, () -> open, id -> halfOpenNow.contains(id));
            ReadyPool.Snapshot snapshot = pool.current();
            for (WorkerRole role : WorkerRole.values()) {
                for (String model : List.of("m1", "m2", "other")) {
                    assertThat(snapshot.eligible(role, model)).as("step %d %s %s", step, role, model)
                            .containsExactlyElementsOf(naive(registry.fleet(), open, halfOpenNow, role, model));
                    // Asked twice (memoized), the same answer.
                    assertThat(snapshot.eligible(role, model)).containsExactlyElementsOf(snapshot.eligible(role, model));
                }
            }
            boolean naiveReady = !naive(registry.fleet(), open, halfOpenNow, WorkerRole.REGULAR, null).isEmpty()
                    || (!naive(registry.fleet(), open, halfOpenNow, WorkerRole.PREFILL, null).isEmpty()
                            && !naive(registry.fleet(), open, halfOpenNow, WorkerRole.DECODE, null).isEmpty());
            assertThat(snapshot.canServeSomething()).as("step %d ready", step).isEqualTo(naiveReady);
        }
    }

    @Test
    void rebuild_withNothingChanged_keepsTheSameSnapshot_andAClosedFleetSharesOneList() {
        WorkerRegistry registry = new WorkerRegistry();
        registry.add(Worker.regular("http://a:1"));
        registry.add(Worker.regular("http://b:1"));
        ReadyPool pool = new ReadyPool();
        pool.rebuild(registry::fleet, Set::of, id -> true);
        ReadyPool.Snapshot first = pool.current();
        pool.rebuild(registry::fleet, Set::of, id -> true);
        assertThat(pool.current()).isSameAs(first);
        assertThat(first.eligible(WorkerRole.REGULAR, "m")).isSameAs(first.eligible(WorkerRole.REGULAR, "m"));
        // and the policy receives that very list: RoutingRequest's defensive copy must not copy it per request
        // (an unmodifiableList wrapper did: an O(pool) copy plus an O(pool) CandidateIndex rebuild per request)
        assertThat(new RoutingRequest(first.eligible(WorkerRole.REGULAR, "m"), id -> 0, 0, null).candidates())
                .isSameAs(first.eligible(WorkerRole.REGULAR, "m"));
        pool.rebuild(registry::fleet, () -> Set.of(Worker.regular("http://a:1").id()), id -> false);
        assertThat(pool.current().generation()).isGreaterThan(first.generation());
        assertThat(pool.current().eligible(WorkerRole.REGULAR, "m")).extracting(Worker::url).containsExactly("http://b:1");
    }

    @Test
    void prefillWorkerWithoutABootstrapPort_isNotAPairMember_untilThePortIsLearned() {
        WorkerRegistry registry = new WorkerRegistry();
        Worker prefill = Worker.of("http://p:1", WorkerRole.PREFILL, null);
        registry.add(prefill);
        registry.add(Worker.of("http://d:1", WorkerRole.DECODE, null));
        ReadyPool pool = new ReadyPool();
        pool.rebuild(registry::fleet, Set::of, id -> true);
        assertThat(pool.current().eligible(WorkerRole.PREFILL, null)).isEmpty();
        assertThat(pool.current().canServeSomething()).isFalse();

        registry.update(prefill.id(), w -> w.withRole(WorkerRole.PREFILL, 8998));
        pool.rebuild(registry::fleet, Set::of, id -> true);
        assertThat(pool.current().eligible(WorkerRole.PREFILL, null)).extracting(Worker::bootstrapPort).containsExactly(8998);
        assertThat(pool.current().canServeSomething()).isTrue();
        assertThat(pool.current().usableCount()).isEqualTo(2);
    }

    private static List<Worker> naive(WorkerRegistry.Fleet fleet, Set<String> open, Set<String> halfOpenNow,
            WorkerRole role, String model) {
        List<Worker> out = new ArrayList<>();
        for (Worker w : fleet.workers().values()) {
            boolean routable = fleet.isHealthy(w.id()) && !fleet.isDraining(w.id());
            boolean breakerAllows = !open.contains(w.id()) || halfOpenNow.contains(w.id());
            boolean pairable = w.role() != WorkerRole.PREFILL || w.bootstrapPort() != null;
            if (routable && breakerAllows && pairable && w.role() == role && w.serves(model)) {
                out.add(w);
            }
        }
        return out;
    }
}
