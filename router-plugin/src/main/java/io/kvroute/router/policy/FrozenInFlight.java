package io.kvroute.router.policy;

import io.kvroute.router.worker.Worker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * Router-local in-flight counts read once, when a {@link RoutingRequest} is built: every comparator,
 * tier and tie-break of one decision then sees the same number for a worker, however other threads
 * dispatch and complete meanwhile (before, each comparator froze its own copy at a different moment,
 * so one decision could rank a worker by two different counts). Immutable and safe to share.
 *
 * <p>Only the request's candidates are frozen; an id outside them (no policy asks for one) reads
 * the live counter.
 */
final class FrozenInFlight implements ToIntFunction<String> {
    private final Map<String, Integer> counts;
    private final ToIntFunction<String> live;

    private FrozenInFlight(Map<String, Integer> counts, ToIntFunction<String> live) {
        this.counts = counts;
        this.live = live;
    }

    /** {@code live} frozen for {@code candidates}; an already frozen function is returned as it is. */
    static ToIntFunction<String> of(List<Worker> candidates, ToIntFunction<String> live) {
        if (live instanceof FrozenInFlight) {
            return live;
        }
        Map<String, Integer> counts = new HashMap<>(candidates.size() * 2);
        for (Worker w : candidates) {
            counts.put(w.id(), live.applyAsInt(w.id()));
        }
        return new FrozenInFlight(counts, live);
    }

    @Override
    public int applyAsInt(String workerId) {
        Integer n = counts.get(workerId);
        return n != null ? n : live.applyAsInt(workerId);
    }
}
