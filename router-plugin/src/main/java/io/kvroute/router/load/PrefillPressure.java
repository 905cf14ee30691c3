package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToIntFunction;

/**
 * Orders workers by prefill pressure, least pressured first ({@code compare_prefill_pressure}
 * in SGLang {@code experimental/sgl-router/src/policies/admission.rs}).
 *
 * <p>Engine data is used only if EVERY worker of the compared set has a fresh sample in the
 * snapshot; otherwise all are compared on the router-local in-flight count (mixing sources would
 * compare unlike numbers). With engine data the order is: estimated prefill queue ms; then
 * {@code (num_waiting_uncached_tokens, num_waiting_reqs, num_running_reqs)}; then router-local
 * in-flight. Ties return 0 so the caller can break them by worker id.
 *
 * <p>A total order, by construction: every field is chosen once for the whole set, never per pair.
 * Upstream compares the estimate "when both have one", which is not transitive when only some
 * workers have an estimate (A < C on ms, C < B and B < A on waiting counts), and TimSort may then
 * throw; here the estimate is a key only when every worker of the set has one, and the uncached
 * tokens only when every worker reports the extension. Every input is frozen at construction (the
 * snapshot's loads and each worker's in-flight count, see {@link InFlightSnapshot}), so the
 * comparator answers the same during a whole sort while other threads dispatch. Compare members of
 * the set only. Bound to one decision on one thread.
 */
public final class PrefillPressure implements Comparator<String> {
    private final Map<String, WorkerLoad> loads;
    private final boolean engine;
    private final boolean allEstimated;
    private final boolean allExtension;
    private final ToIntFunction<String> routerLocalInFlight;

    private PrefillPressure(Map<String, WorkerLoad> loads, boolean engine, ToIntFunction<String> routerLocalInFlight) {
        this.loads = loads;
        this.engine = engine;
        this.allEstimated = engine && loads.values().stream().allMatch(l -> l.estimatedPrefillQueueMs().isPresent());
        this.allExtension = engine && loads.values().stream().allMatch(WorkerLoad::hasExtension);
        this.routerLocalInFlight = routerLocalInFlight;
    }

    /** Builds the comparator for {@code comparedSet}, deciding engine vs router-local once for the set. */
    public static PrefillPressure of(EngineLoadSnapshot snapshot, Iterable<String> comparedSet,
                                     ToIntFunction<String> routerLocalInFlight) {
        requireNonNull(snapshot, "snapshot");
        requireNonNull(routerLocalInFlight, "routerLocalInFlight");
        Optional<Map<String, WorkerLoad>> loads = snapshot.freshForAll(comparedSet);
        return new PrefillPressure(loads.orElse(Map.of()), loads.isPresent(),
                new InFlightSnapshot(routerLocalInFlight));
    }

    /** Router-local comparison only (no load plane): in-flight counts frozen for {@code comparedSet}. */
    public static PrefillPressure routerLocal(Iterable<String> comparedSet, ToIntFunction<String> routerLocalInFlight) {
        requireNonNull(routerLocalInFlight, "routerLocalInFlight");
        return new PrefillPressure(Map.of(), false, new InFlightSnapshot(routerLocalInFlight));
    }

    /** The source this comparator uses for the set as a whole. */
    public PressureSource source() {
        if (!engine) {
            return PressureSource.ROUTER_LOCAL;
        }
        return allEstimated ? PressureSource.ESTIMATED_PREFILL_QUEUE_MS : PressureSource.NATIVE_QUEUE_TOKENS;
    }

    /** The fresh load used for {@code workerId}, empty under router-local comparison. */
    public Optional<WorkerLoad> load(String workerId) {
        return Optional.ofNullable(loads.get(workerId));
    }

    @Override
    public int compare(String a, String b) {
        WorkerLoad la = loads.get(a);
        WorkerLoad lb = loads.get(b);
        if (engine && la != null && lb != null) {
            if (allEstimated) {
                int c = Double.compare(la.estimatedPrefillQueueMs().getAsDouble(), lb.estimatedPrefillQueueMs().getAsDouble());
                if (c != 0) {
                    return c;
                }
            }
            if (allExtension) {
                int c = Long.compare(la.numWaitingUncachedTokens(), lb.numWaitingUncachedTokens());
                if (c != 0) {
                    return c;
                }
            }
            int c = Integer.compare(la.numWaitingReqs(), lb.numWaitingReqs());
            if (c != 0) {
                return c;
            }
            c = Integer.compare(la.numRunningReqs(), lb.numRunningReqs());
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(routerLocalInFlight.applyAsInt(a), routerLocalInFlight.applyAsInt(b));
    }
}
