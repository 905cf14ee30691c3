package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToIntFunction;

/**
 * Orders decode workers by pressure, least pressured first, for PD pairing.
 *
 * <p>Same all-or-nothing freshness rule as {@link PrefillPressure}. With engine data the order is:
 * waiting requests; running requests; KV usage fraction {@code num_tokens / max_total_num_tokens}
 * (only when every worker of the set knows its capacity: a per-pair choice would not be transitive);
 * KV tokens in use; then router-local in-flight, each worker's count read once at construction
 * ({@link InFlightSnapshot}). Ties return 0. A total order over the set, bound to one decision on
 * one thread.
 */
public final class DecodePressure implements Comparator<String> {
    private final Map<String, WorkerLoad> loads;
    private final boolean engine;
    private final ToIntFunction<String> routerLocalInFlight;

    private final boolean allCapacitiesKnown;

    private DecodePressure(Map<String, WorkerLoad> loads, boolean engine, ToIntFunction<String> routerLocalInFlight) {
        this.loads = loads;
        this.engine = engine;
        this.allCapacitiesKnown = engine && loads.values().stream().allMatch(l -> l.kvUsageFraction().isPresent());
        this.routerLocalInFlight = routerLocalInFlight;
    }

    public static DecodePressure of(EngineLoadSnapshot snapshot, Iterable<String> comparedSet,
                                    ToIntFunction<String> routerLocalInFlight) {
        requireNonNull(snapshot, "snapshot");
        requireNonNull(routerLocalInFlight, "routerLocalInFlight");
        Optional<Map<String, WorkerLoad>> loads = snapshot.freshForAll(comparedSet);
        return new DecodePressure(loads.orElse(Map.of()), loads.isPresent(),
                new InFlightSnapshot(routerLocalInFlight));
    }

    /** {@code NATIVE_QUEUE_TOKENS} when engine data is used, else {@code ROUTER_LOCAL}. */
    public PressureSource source() {
        return engine ? PressureSource.NATIVE_QUEUE_TOKENS : PressureSource.ROUTER_LOCAL;
    }

    @Override
    public int compare(String a, String b) {
        WorkerLoad la = loads.get(a);
        WorkerLoad lb = loads.get(b);
        if (engine && la != null && lb != null) {
            int c = Integer.compare(la.numWaitingReqs(), lb.numWaitingReqs());
            if (c != 0) {
                return c;
            }
            c = Integer.compare(la.numRunningReqs(), lb.numRunningReqs());
            if (c != 0) {
                return c;
            }
            if (allCapacitiesKnown) {
                c = Double.compare(la.kvUsageFraction().getAsDouble(), lb.kvUsageFraction().getAsDouble());
                if (c != 0) {
                    return c;
                }
            }
            c = Long.compare(la.numTokens(), lb.numTokens());
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(routerLocalInFlight.applyAsInt(a), routerLocalInFlight.applyAsInt(b));
    }
}
