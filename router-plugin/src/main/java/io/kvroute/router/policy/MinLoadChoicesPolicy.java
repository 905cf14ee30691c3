package io.kvroute.router.policy;

import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Power of k choices (Mitzenmacher): sample k distinct candidates uniformly and take the least
 * loaded, ties to the first sampled. k = 1 is uniform random; k >= pool is the exact minimum (ties
 * to registry order). {@code power_of_two} is k = 2. Load is router-local in-flight here; the load
 * plane issue adds engine-reported prefill pressure.
 */
final class MinLoadChoicesPolicy implements RoutingPolicy {

    private final String name;
    private final int choices;
    private final Supplier<RandomGenerator> random;

    MinLoadChoicesPolicy(String name, int choices, Supplier<RandomGenerator> random) {
        if (choices < 1) {
            throw new IllegalArgumentException("choices must be >= 1: " + choices);
        }
        this.name = Objects.requireNonNull(name, "name");
        this.choices = choices;
        this.random = Objects.requireNonNull(random, "random");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Decision select(RoutingRequest request) {
        List<Worker> pool = request.candidates();
        int size = pool.size();
        if (size == 1) {
            return new Decision(pool.get(0), DecisionReason.SINGLE_WORKER, Decision.SOURCE_NONE);
        }
        Worker best = null;
        int bestLoad = Integer.MAX_VALUE;
        if (choices >= size) {
            for (Worker worker : pool) {
                int load = request.inFlight().applyAsInt(worker.id());
                if (load < bestLoad) {
                    best = worker;
                    bestLoad = load;
                }
            }
        } else {
            // Partial Fisher-Yates over an index array: k distinct samples in O(k) after O(n) setup.
            int[] indexes = new int[size];
            for (int i = 0; i < size; i++) {
                indexes[i] = i;
            }
            RandomGenerator rng = random.get();
            for (int i = 0; i < choices; i++) {
                int j = i + rng.nextInt(size - i);
                int picked = indexes[j];
                indexes[j] = indexes[i];
                indexes[i] = picked;
                Worker worker = pool.get(picked);
                int load = request.inFlight().applyAsInt(worker.id());
                if (load < bestLoad) {
                    best = worker;
                    bestLoad = load;
                }
            }
        }
        return new Decision(best, DecisionReason.MIN_LOAD_CHOICES, Decision.SOURCE_ROUTER_LOCAL);
    }
}
