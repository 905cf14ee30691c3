package io.kvroute.router.lora;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class AdapterPlacementTest {

    private static Worker worker(String id) {
        return new Worker(id, "http://" + id, WorkerRole.REGULAR, "base", null, List.of());
    }

    private static List<Worker> pool(int n) {
        List<Worker> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(worker("w" + i));
        }
        return out;
    }

    @Test
    void residentWorkerWins_untilItsQueueOutweighsTheWeight() {
        // w0 runs the adapter; w1 has a free slot; w2 is full of other adapters
        AdapterView view = new AdapterView(Map.of(
                "w0", new WorkerAdapters(Set.of(), Set.of("a"), Set.of(), 2, -1),
                "w1", new WorkerAdapters(Set.of(), Set.of("x"), Set.of(), 2, -1),
                "w2", new WorkerAdapters(Set.of(), Set.of("x", "y"), Set.of(), 2, -1)), Map.of(), Map.of());
        Map<String, Integer> load = new HashMap<>(Map.of("w0", 3, "w1", 2, "w2", 0));
        // costs: w0 3 + 0, w1 2 + 8 * 0.2 = 3.6, w2 0 + 8 = 8
        assertThat(AdapterPlacement.choose(pool(3), view, "a", load::get, 8, new SplittableRandom(1)).worker().id())
                .isEqualTo("w0");
        load.put("w0", 4); // w0 4 > w1 3.6
        AdapterPlacement.Placement p = AdapterPlacement.choose(pool(3), view, "a", load::get, 8, new SplittableRandom(1));
        assertThat(p.worker().id()).isEqualTo("w1");
        assertThat(p.score()).isEqualTo(0.8);
        load.putAll(Map.of("w0", 9, "w1", 9)); // w2 8 beats both
        assertThat(AdapterPlacement.choose(pool(3), view, "a", load::get, 8, new SplittableRandom(1)).worker().id())
                .isEqualTo("w2");
    }

    @Test
    void weightZero_isLeastLoad() {
        AdapterView view = new AdapterView(Map.of("w0", new WorkerAdapters(Set.of(), Set.of("a"), Set.of(), 2, -1)),
                Map.of(), Map.of());
        Map<String, Integer> load = Map.of("w0", 1, "w1", 0);
        assertThat(AdapterPlacement.choose(pool(2), view, "a", load::get, 0, new SplittableRandom(1)).worker().id())
                .isEqualTo("w1");
    }

    /** Against a naive model: the choice is always one of the minimum-cost workers, and ties are shared evenly. */
    @Test
    void choiceIsAMinimumCostWorker_tiesSharedUniformly() {
        Random rnd = new Random(7);
        for (int round = 0; round < 500; round++) {
            int n = 1 + rnd.nextInt(8);
            List<Worker> pool = pool(n);
            Map<String, WorkerAdapters> byWorker = new HashMap<>();
            Map<String, Integer> load = new HashMap<>();
            for (Worker w : pool) {
                byWorker.put(w.id(), new WorkerAdapters(Set.of(), rnd.nextBoolean() ? Set.of("a") : Set.of("b"),
                        rnd.nextBoolean() ? Set.of("a") : Set.of(), rnd.nextInt(4), -1));
                load.put(w.id(), rnd.nextInt(4));
            }
            AdapterView view = new AdapterView(byWorker, Map.of(), Map.of());
            double weight = rnd.nextInt(3) * 5;
            double min = Double.POSITIVE_INFINITY;
            for (Worker w : pool) {
                min = Math.min(min, load.get(w.id()) + weight * (1 - AdapterAffinity.score(view, w.id(), "a")));
            }
            List<String> best = new ArrayList<>();
            for (Worker w : pool) {
                if (load.get(w.id()) + weight * (1 - AdapterAffinity.score(view, w.id(), "a")) == min) {
                    best.add(w.id());
                }
            }
            Map<String, Integer> picks = new HashMap<>();
            SplittableRandom r = new SplittableRandom(round);
            int samples = 400 * best.size();
            for (int i = 0; i < samples; i++) {
                String id = AdapterPlacement.choose(pool, view, "a", load::get, weight, r).worker().id();
                assertThat(best).as("round " + round).contains(id);
                picks.merge(id, 1, Integer::sum);
            }
            for (String id : best) { // each tied worker gets 1/k of the picks, within 25 %
                assertThat(picks.getOrDefault(id, 0)).as("round " + round + " " + id).isBetween(300, 500);
            }
        }
    }
}
