package io.kvroute.router.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class PoliciesTest {

    private static final List<Worker> THREE = List.of(
            Worker.regular("http://w0:1"), Worker.regular("http://w1:1"), Worker.regular("http://w2:1"));

    private static RoutingRequest request(List<Worker> pool, Map<String, Integer> load) {
        Map<String, Integer> byId = new HashMap<>();
        load.forEach((url, v) -> byId.put(Worker.idFor(url), v));
        return new RoutingRequest(pool, id -> byId.getOrDefault(id, 0), 10, null);
    }

    private static List<String> picks(RoutingPolicy policy, RoutingRequest request, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(policy.select(request).worker().url());
        }
        return out;
    }

    @Test
    void roundRobin_cyclesInRegistryOrder() {
        RoutingPolicy policy = Policies.create("round_robin", 2);
        assertThat(picks(policy, request(THREE, Map.of()), 7)).containsExactly(
                "http://w0:1", "http://w1:1", "http://w2:1", "http://w0:1", "http://w1:1", "http://w2:1", "http://w0:1");
    }

    @Test
    void roundRobin_continuesModuloTheNewSizeWhenThePoolShrinks() {
        RoutingPolicy policy = Policies.create("round_robin", 2);
        picks(policy, request(THREE, Map.of()), 2); // counter now 2
        List<Worker> two = THREE.subList(0, 2);
        assertThat(picks(policy, request(two, Map.of()), 3)).containsExactly("http://w0:1", "http://w1:1", "http://w0:1");
    }

    @Test
    void powerOfTwo_neverPicksTheMostLoadedWorker() {
        Map<String, Integer> load = Map.of("http://w0:1", 5, "http://w1:1", 0, "http://w2:1", 9);
        // Whatever pair is sampled, the most loaded worker (w2) can never win against another.
        for (int seed = 0; seed < 200; seed++) {
            int s = seed;
            RoutingPolicy seeded = Policies.create("power_of_two", 2, () -> new SplittableRandom(s));
            Decision decision = seeded.select(request(THREE, load));
            assertThat(decision.worker().url()).isNotEqualTo("http://w2:1");
            assertThat(decision.reason()).isEqualTo(DecisionReason.MIN_LOAD_CHOICES);
            assertThat(decision.pressureSource()).isEqualTo(Decision.SOURCE_ROUTER_LOCAL);
        }
    }

    @Test
    void powerOfTwo_onAFakeLoadTable_picksTheLighterOfTheSampledPair() {
        // Exact expectation per sampled pair, computed from the same seeded generator.
        Map<String, Integer> load = Map.of("http://w0:1", 2, "http://w1:1", 7, "http://w2:1", 4);
        for (int seed = 0; seed < 50; seed++) {
            SplittableRandom mirror = new SplittableRandom(seed);
            int first = mirror.nextInt(3);
            int[] idx = {0, 1, 2};
            idx[first] = 0;
            idx[0] = first;
            int j = 1 + mirror.nextInt(2);
            int second = idx[j];
            String a = THREE.get(first).url();
            String b = THREE.get(second).url();
            String expected = load.get(b) < load.get(a) ? b : a;
            int s = seed;
            assertThat(Policies.create("power_of_two", 2, () -> new SplittableRandom(s)).select(request(THREE, load))
                    .worker().url()).as("seed %d sampled %s,%s", seed, a, b).isEqualTo(expected);
        }
    }

    @Test
    void minLoadChoices_samplesAsAFisherYatesOverTheWholeIndexArray() {
        // The policy keeps only the swapped slots of the index array (no O(pool) array per request);
        // the picks must be exactly those of the textbook shuffle over a real array with the same draws. Loads are
        // distinct, so the winner is the least loaded of the sampled set and a different sample shows up as a
        // different winner for some seed.
        for (int size : new int[] {3, 4, 9, 64}) {
            List<Worker> pool = new ArrayList<>();
            Map<String, Integer> load = new HashMap<>();
            SplittableRandom loads = new SplittableRandom(size);
            for (int w = 0; w < size; w++) {
                String url = "http://w" + w + ":1";
                pool.add(Worker.regular(url));
                load.put(url, w * 7 + loads.nextInt(7)); // distinct
            }
            for (int k = 2; k < Math.min(size, 9); k++) {
                for (int seed = 0; seed < 300; seed++) {
                    SplittableRandom mirror = new SplittableRandom(seed);
                    int[] idx = new int[size];
                    for (int i = 0; i < size; i++) {
                        idx[i] = i;
                    }
                    String expected = null;
                    for (int i = 0; i < k; i++) {
                        int j = i + mirror.nextInt(size - i);
                        int chosen = idx[j];
                        idx[j] = idx[i];
                        idx[i] = chosen;
                        String url = pool.get(chosen).url();
                        if (expected == null || load.get(url) < load.get(expected)) {
                            expected = url;
                        }
                    }
                    int s = seed;
                    RoutingPolicy policy = Policies.create("power_of_two", k, () -> new SplittableRandom(s));
                    assertThat(policy.select(request(pool, load)).worker().url())
                            .as("pool %d, k %d, seed %d", size, k, seed).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void powerOfTwo_withEqualLoad_isRoughlyUniform() {
        SplittableRandom rng = new SplittableRandom(1);
        RoutingPolicy policy = Policies.create("power_of_two", 2, () -> rng);
        Map<String, Integer> counts = new HashMap<>();
        int n = 30_000;
        for (int i = 0; i < n; i++) {
            counts.merge(policy.select(request(THREE, Map.of())).worker().url(), 1, Integer::sum);
        }
        for (int count : counts.values()) {
            assertThat((double) count / n).isCloseTo(1.0 / 3, Offset.offset(0.02));
        }
    }

    @Test
    void minLoadChoices_kAtLeastPoolIsTheExactMinimumWithRegistryOrderTies() {
        Map<String, Integer> load = Map.of("http://w0:1", 3, "http://w1:1", 1, "http://w2:1", 1);
        RoutingPolicy policy = Policies.create("power_of_two", 3, SplittableRandom::new);
        assertThat(picks(policy, request(THREE, load), 5)).containsOnly("http://w1:1");
    }

    @Test
    void minLoadChoices_kOneIsUniformRandomIgnoringLoad() {
        Map<String, Integer> load = Map.of("http://w0:1", 1000);
        SplittableRandom rng = new SplittableRandom(3);
        RoutingPolicy policy = Policies.create("power_of_two", 1, () -> rng);
        long w0 = picks(policy, request(THREE, load), 3000).stream().filter("http://w0:1"::equals).count();
        assertThat(w0).isBetween(850L, 1150L);
    }

    @Test
    void singleCandidate_isChosenWithoutSampling() {
        Decision decision = Policies.create("power_of_two", 2).select(request(THREE.subList(0, 1), Map.of()));
        assertThat(decision.reason()).isEqualTo(DecisionReason.SINGLE_WORKER);
    }

    @Test
    void random_staysWithinThePoolAndCoversIt() {
        SplittableRandom rng = new SplittableRandom(5);
        RoutingPolicy policy = Policies.create("random", 2, () -> rng);
        assertThat(picks(policy, request(THREE, Map.of()), 300))
                .containsOnly("http://w0:1", "http://w1:1", "http://w2:1")
                .contains("http://w0:1", "http://w1:1", "http://w2:1");
    }

    @Test
    void unknownPolicy_isRejectedListingTheChoices() {
        assertThatThrownBy(() -> Policies.create("fastest", 2))
                .hasMessageContaining("fastest").hasMessageContaining("round_robin, random, power_of_two");
    }
}
