package io.kvroute.router.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.Worker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** A routing request carries one snapshot of the in-flight counts: what it was built with, never re-read. */
class RoutingRequestSnapshotTest {

    private static final List<Worker> FLEET = List.of(Worker.regular("http://a:1"), Worker.regular("http://b:1"),
            Worker.regular("http://c:1"));

    @Test
    void inFlight_isTheCountAtBuildTime_whateverHappensAfter() {
        Map<String, Integer> live = new HashMap<>(Map.of(FLEET.get(0).id(), 5, FLEET.get(1).id(), 1, FLEET.get(2).id(), 3));
        RoutingRequest request = new RoutingRequest(FLEET, id -> live.getOrDefault(id, 0), 100, null);
        live.replaceAll((id, n) -> n + 100);
        live.put(FLEET.get(1).id(), 0);

        assertThat(FLEET).allSatisfy(w -> assertThat(request.inFlight().applyAsInt(w.id()))
                .isEqualTo(Map.of(FLEET.get(0).id(), 5, FLEET.get(1).id(), 1, FLEET.get(2).id(), 3).get(w.id())));
        assertThat(request.withCandidates(FLEET.subList(0, 2)).inFlight().applyAsInt(FLEET.get(1).id()))
                .as("a fallback over a subset keeps the same snapshot").isEqualTo(1);
    }

    /**
     * A counter that moves on every read (other threads dispatching mid-decision): the least-loaded
     * policy ranks by the counts of one moment, so it picks the worker that was least loaded then.
     * Read live, the first worker compared looks busier on each later read and the pick depends on
     * the order of the reads.
     */
    @Test
    void leastLoadedPolicy_ranksOneSnapshot() {
        AtomicInteger readsSinceBuild = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean built = new java.util.concurrent.atomic.AtomicBoolean();
        Map<String, Integer> atBuild = Map.of(FLEET.get(0).id(), 2, FLEET.get(1).id(), 4, FLEET.get(2).id(), 3);
        // once the request is built, each read makes worker a look 10 busier and b 10 idler
        ToIntFunction<String> moving = id -> {
            int drift = built.get() ? 10 * readsSinceBuild.incrementAndGet() : 0;
            if (id.equals(FLEET.get(0).id())) {
                return atBuild.get(id) + drift;
            }
            if (id.equals(FLEET.get(1).id())) {
                return Math.max(0, atBuild.get(id) - drift);
            }
            return atBuild.get(id);
        };
        RoutingRequest request = new RoutingRequest(FLEET, moving, 100, null);
        built.set(true);
        MinLoadChoicesPolicy leastLoaded = new MinLoadChoicesPolicy("least", FLEET.size(), () -> RandomGenerator.of("L64X128MixRandom"), false);

        assertThat(leastLoaded.select(request).worker()).isEqualTo(FLEET.get(0));
    }
}
