package io.kvroute.bench.trace;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The routing arms both trace modes compare, in run order, with the router flags of each. The
 * saturation pin uses the saturation scenario's gate values (limit 4, floor 1).
 */
public final class TraceArms {

    public static final String RANDOM = "random";
    public static final String ROUND_ROBIN = "round_robin";
    public static final String POWER_OF_TWO = "power_of_two";
    public static final String CACHE_APPROX = "cache_aware/approximate";
    public static final String CACHE_EXACT = "cache_aware/exact";
    public static final String CACHE_EXACT_PIN = "cache_aware/exact+pin";

    /** Queue gate of the pinned arm: owners with this many waiting requests are passed over... */
    static final int PIN_QUEUE_LIMIT = 4;
    /** ...unless no worker has fewer than this many waiting, when the request stays on its owner. */
    static final int PIN_QUEUE_FLOOR = 1;

    /** Router flags per arm. */
    public static final Map<String, List<String>> ROUTER_FLAGS = routerFlags();

    public static final List<String> NAMES = List.copyOf(ROUTER_FLAGS.keySet());

    private TraceArms() {}

    private static Map<String, List<String>> routerFlags() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put(RANDOM, List.of("--policy", "random"));
        m.put(ROUND_ROBIN, List.of("--policy", "round_robin"));
        m.put(POWER_OF_TWO, List.of("--policy", "power_of_two"));
        m.put(CACHE_APPROX, List.of("--policy", "cache_aware", "--cache-index", "approximate"));
        m.put(CACHE_EXACT, List.of("--policy", "cache_aware", "--cache-index", "exact"));
        m.put(CACHE_EXACT_PIN, List.of("--policy", "cache_aware", "--cache-index", "exact",
                "--worker-queue-limit", Integer.toString(PIN_QUEUE_LIMIT),
                "--saturation-queue-floor", Integer.toString(PIN_QUEUE_FLOOR)));
        return Collections.unmodifiableMap(m);
    }

    /** Whether the arm routes on the engines' KV events (the router must subscribe before measuring). */
    static boolean usesExactIndex(String arm) {
        return arm.startsWith(CACHE_EXACT);
    }
}
