package io.kvroute.router.policy;

import java.util.Objects;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/** A uniform random pick; the generator is injected (one per thread, supplied by the caller). */
final class RandomPolicy implements RoutingPolicy {

    private final Supplier<RandomGenerator> random;

    RandomPolicy(Supplier<RandomGenerator> random) {
        this.random = Objects.requireNonNull(random, "random");
    }

    @Override
    public String name() {
        return "random";
    }

    @Override
    public Decision select(RoutingRequest request) {
        int index = random.get().nextInt(request.candidates().size());
        return new Decision(request.candidates().get(index), DecisionReason.RANDOM, Decision.SOURCE_NONE);
    }
}
