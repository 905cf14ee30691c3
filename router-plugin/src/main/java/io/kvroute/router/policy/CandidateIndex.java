package io.kvroute.router.policy;

import io.kvroute.router.worker.Worker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Candidates by id for one candidate list, remembered for the last list seen. The router hands every
 * request of a (role, model) the same immutable list instance until the fleet or a breaker changes
 * ({@code worker/ReadyPool}), so in steady state the lookup map is built once per change instead of once
 * per request; a new list (a change, or a filtered list while a breaker is open) costs one O(pool) build.
 *
 * <p>Thread-safe: the remembered pair is an immutable record published through a volatile field; a race
 * only costs a redundant build.
 */
final class CandidateIndex {

    private record Entry(List<Worker> list, Map<String, Worker> byId) {}

    private volatile Entry last = new Entry(List.of(), Map.of());

    /** The candidates of {@code pool} by id (read-only). */
    Map<String, Worker> of(List<Worker> pool) {
        Entry e = last;
        if (e.list == pool) {
            return e.byId;
        }
        Map<String, Worker> byId = new HashMap<>(pool.size() * 2);
        for (Worker w : pool) {
            byId.put(w.id(), w);
        }
        last = new Entry(pool, byId);
        return byId;
    }
}
