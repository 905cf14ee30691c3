package io.kvroute.bench.fleet;

import java.util.List;
import java.util.Objects;

/**
 * What fleet a scenario variant needs.
 *
 * @param workers number of mock GPU workers
 * @param workerArgs command-line arguments for every worker (e.g. {@code --prefill-queue-strategy hrrn});
 *     the factory adds {@code --port 0} and anything per-worker (ports, ids)
 * @param routerArgs command-line arguments for the router (e.g. {@code --policy cache_aware}); the
 *     factory adds {@code --port 0 --worker-urls ...}
 */
public record FleetSpec(int workers, List<String> workerArgs, List<String> routerArgs) {

    public FleetSpec {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1: " + workers);
        }
        workerArgs = List.copyOf(Objects.requireNonNull(workerArgs, "workerArgs"));
        routerArgs = List.copyOf(Objects.requireNonNull(routerArgs, "routerArgs"));
    }
}
