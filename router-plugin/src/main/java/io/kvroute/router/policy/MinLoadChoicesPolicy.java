package io.kvroute.router.policy;

import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Power of k choices (Mitzenmacher): sample k distinct candidates uniformly and take the least
 * loaded, ties to the first sampled. k = 1 is uniform random; k >= pool is the exact minimum (ties
 * to registry order). {@code power_of_two} is k = 2.
 *
 * <p>Load is compared as prefill pressure ({@code compare_prefill_pressure} of SGLang
 * {@code experimental/sgl-router/src/policies/admission.rs}): the engine's estimated prefill queue ms
 * when every sampled worker has it, then (waiting uncached tokens, waiting requests, running requests), then
 * router-local in-flight; engine data is used only when every sampled worker has a fresh report,
 * otherwise all of them are compared on router-local in-flight. A decode pool is compared on decode
 * pressure instead (waiting, running, KV usage fraction, used tokens).
 */
final class MinLoadChoicesPolicy implements RoutingPolicy {

    private final String name;
    private final int choices;
    private final Supplier<RandomGenerator> random;
    private final boolean decodePressure;

    MinLoadChoicesPolicy(String name, int choices, Supplier<RandomGenerator> random) {
        this(name, choices, random, false);
    }

    MinLoadChoicesPolicy(String name, int choices, Supplier<RandomGenerator> random, boolean decodePressure) {
        if (choices < 1) {
            throw new IllegalArgumentException("choices must be >= 1: " + choices);
        }
        this.name = Objects.requireNonNull(name, "name");
        this.choices = choices;
        this.random = Objects.requireNonNull(random, "random");
        this.decodePressure = decodePressure;
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
        List<Worker> sampled;
        if (choices >= size) {
            sampled = pool;
        } else {
            // Partial Fisher-Yates over a virtual index array (slot j holds j until a swap moves it): k distinct
            // samples in O(k^2) with no O(pool) setup, the same draws and picks as over a real array. Only the
            // first k slots and the slots drawn from are ever swapped, so they are the only ones remembered.
            RandomGenerator rng = random.get();
            Worker[] picked = new Worker[choices];
            int[] movedSlot = new int[choices];
            int[] movedValue = new int[choices];
            int moved = 0;
            for (int i = 0; i < choices; i++) {
                int j = i + rng.nextInt(size - i);
                int chosen = j;
                int atI = i;
                int jAt = -1;
                for (int m = 0; m < moved; m++) {
                    if (movedSlot[m] == j) {
                        chosen = movedValue[m];
                        jAt = m;
                    }
                    if (movedSlot[m] == i) {
                        atI = movedValue[m];
                    }
                }
                // slot j now holds what slot i held; slot i (never read again) is dropped from the record
                if (jAt >= 0) {
                    movedValue[jAt] = atI;
                } else if (j != i) {
                    movedSlot[moved] = j;
                    movedValue[moved] = atI;
                    moved++;
                }
                picked[i] = pool.get(chosen);
            }
            sampled = java.util.Arrays.asList(picked);
        }
        List<String> ids = new java.util.ArrayList<>(sampled.size());
        for (Worker worker : sampled) {
            ids.add(worker.id());
        }
        java.util.Comparator<String> pressure;
        String source;
        if (request.loads() == null) {
            pressure = io.kvroute.router.load.PrefillPressure.routerLocal(ids, request.inFlight());
            source = Decision.SOURCE_ROUTER_LOCAL;
        } else if (decodePressure) {
            io.kvroute.router.load.DecodePressure p = io.kvroute.router.load.DecodePressure.of(request.loads(), ids, request.inFlight());
            pressure = p;
            source = p.source().label();
        } else {
            io.kvroute.router.load.PrefillPressure p = io.kvroute.router.load.PrefillPressure.of(request.loads(), ids, request.inFlight());
            pressure = p;
            source = p.source().label();
        }
        Worker best = sampled.get(0);
        for (int i = 1; i < sampled.size(); i++) {
            if (pressure.compare(sampled.get(i).id(), best.id()) < 0) {
                best = sampled.get(i);
            }
        }
        return new Decision(best, DecisionReason.MIN_LOAD_CHOICES, source);
    }
}
