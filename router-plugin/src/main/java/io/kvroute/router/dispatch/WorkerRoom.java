package io.kvroute.router.dispatch;

import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A request's share of per-worker capacity ({@code --tenants-file} with {@code --qos-worker-capacity-tokens}):
 * the router-side queue admitted it onto a worker with room for its tokens, and the dispatch must route it among
 * the workers that still have room, then tell where it went, so its tokens move there. Implemented by the tenant
 * layer; a request without one (null) is routed over its whole pool.
 *
 * <p>{@link #filter} and {@link #place} are two steps: another request may take a worker's room in between, and
 * {@link #place} then refuses; the dispatch chooses again, at most {@link #MAX_PLACEMENTS} times, after which the
 * placement is forced (one request over that worker's capacity, never more). Thread-safe.
 */
public interface WorkerRoom {

    /** Choices a dispatch makes before it forces a placement (bounds the re-choice loop of racing admissions). */
    int MAX_PLACEMENTS = 3;

    /** The ids of the workers the request may go to now (the one holding its tokens among them), or null: any. */
    Set<String> placeable();

    /**
     * Moves the request's tokens onto {@code workerId}; false, moving nothing, when that worker has no room for
     * them any more (unless {@code force}).
     */
    boolean place(String workerId, boolean force);

    /**
     * The worker whose prefix cache the request's prompt goes to, when that is not the worker holding its tokens:
     * a PD request's prefill worker. When the request ends, the queue looks there for waiters whose prompts are
     * cached (locality), as it looks on the holder for a plain request.
     */
    default void prefixOn(String workerId) {}

    /**
     * {@code candidates} less the workers without room; when none of them has room, the workers of {@code pool}
     * that have (a retry may go back to a tried worker rather than overload one); empty when no worker has room.
     * Returns {@code candidates} itself when every one of them has room (so a policy's per-list caches still hit).
     */
    static List<Worker> filter(Set<String> placeable, List<Worker> candidates, List<Worker> pool) {
        if (placeable == null) {
            return candidates;
        }
        List<Worker> roomy = withRoom(placeable, candidates);
        if (roomy.isEmpty() && candidates != pool) {
            roomy = withRoom(placeable, pool);
        }
        return roomy;
    }

    private static List<Worker> withRoom(Set<String> placeable, List<Worker> workers) {
        int n = 0;
        for (Worker w : workers) {
            if (placeable.contains(w.id())) {
                n++;
            }
        }
        if (n == workers.size()) {
            return workers;
        }
        List<Worker> out = new ArrayList<>(n);
        for (Worker w : workers) {
            if (placeable.contains(w.id())) {
                out.add(w);
            }
        }
        return out;
    }
}
