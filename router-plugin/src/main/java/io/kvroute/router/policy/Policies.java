package io.kvroute.router.policy;

import io.kvroute.router.config.SessionSettings;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/** Builds policies by config name. */
public final class Policies {

    /** Every policy name accepted by {@code --policy}. */
    public static final List<String> NAMES = List.of("round_robin", "random", "power_of_two", "cache_aware", "sticky");

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
            case "cache_aware":
                return cacheAware(CacheAwareConfig.defaults(), minLoadChoices, random, System::currentTimeMillis);
            case "sticky":
                // the declared defaults of --sticky-fallback-policy and --session-idle-secs (read here, not at class
                // initialisation: SessionSettings' own check reads NAMES)
                SessionSettings session = SessionSettings.DEFAULTS;
                return sticky(create(session.fallbackPolicy(), minLoadChoices, random), "sticky",
                        session.idleSecs(), System::nanoTime);
            default:
                throw new IllegalArgumentException(
                        "unknown policy '" + name + "' (choices: " + String.join(", ", NAMES) + ")");
        }
    }

    /** {@code --policy cache_aware} with its flags; {@code ticks} is the prefix index's LRU clock. */
    public static CacheAwarePolicy cacheAware(CacheAwareConfig config, int minLoadChoices,
            Supplier<RandomGenerator> random, java.util.function.LongSupplier ticks) {
        return new CacheAwarePolicy(config, minLoadChoices, random, ticks);
    }

    /** As above with the prefix indexes' global memory bound ({@code --cache-max-index-bytes}). */
    public static CacheAwarePolicy cacheAware(CacheAwareConfig config, int minLoadChoices,
            Supplier<RandomGenerator> random, java.util.function.LongSupplier ticks, long maxIndexBytes) {
        return new CacheAwarePolicy(config, minLoadChoices, random, ticks, maxIndexBytes);
    }

    /**
     * Wraps {@code delegate} with session affinity. For {@code --policy sticky} pass the
     * {@code --sticky-fallback-policy} as delegate and name "sticky"; to honour a session header on
     * any other policy pass that policy and its own name, so metrics keep the policy label.
     */
    public static StickySessionPolicy sticky(RoutingPolicy delegate, String name, double idleSecs,
            java.util.function.LongSupplier nanoClock) {
        return new StickySessionPolicy(name, delegate, (long) (idleSecs * 1_000_000_000L), nanoClock);
    }
}
