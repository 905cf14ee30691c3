package io.kvroute.router.policy;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/** Builds policies by config name. */
public final class Policies {

    /** Every policy name accepted by {@code --policy}. */
    public static final List<String> NAMES = List.of("round_robin", "random", "power_of_two");

    private Policies() {}

    /** A policy using thread-local randomness. */
    public static RoutingPolicy create(String name, int minLoadChoices) {
        return create(name, minLoadChoices, ThreadLocalRandom::current);
    }

    /** A policy for choosing a PD decode worker: load-based policies compare decode pressure. */
    public static RoutingPolicy createDecode(String name, int minLoadChoices) {
        if (name.toLowerCase(Locale.ROOT).equals("power_of_two")) {
            return new MinLoadChoicesPolicy("power_of_two", minLoadChoices, ThreadLocalRandom::current, true);
        }
        return create(name, minLoadChoices);
    }

    /**
     * @throws IllegalArgumentException naming the choices when {@code name} is unknown
     */
    public static RoutingPolicy create(String name, int minLoadChoices, Supplier<RandomGenerator> random) {
        switch (name.toLowerCase(Locale.ROOT)) {
            case "round_robin":
                return new RoundRobinPolicy();
            case "random":
                return new RandomPolicy(random);
            case "power_of_two":
                return new MinLoadChoicesPolicy("power_of_two", minLoadChoices, random);
            default:
                throw new IllegalArgumentException(
                        "unknown policy '" + name + "' (choices: " + String.join(", ", NAMES) + ")");
        }
    }
}
