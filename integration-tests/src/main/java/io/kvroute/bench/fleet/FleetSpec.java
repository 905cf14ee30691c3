package io.kvroute.bench.fleet;

import java.util.List;
import java.util.Objects;

/**
 * What fleet a scenario variant needs: either {@code workers} regular workers, or a PD fleet of
 * {@code workers} prefill plus {@code decodeWorkers} decode workers.
 *
 * @param workers number of regular mock GPU workers, or of prefill workers when {@code decodeWorkers > 0}
 * @param decodeWorkers number of decode workers; 0 = not a PD fleet
 * @param workerArgs command-line arguments for every regular or prefill worker (e.g.
 *     {@code --prefill-queue-strategy hrrn}); the factory adds {@code --port 0}, the role, the model id
 *     and the tokenizer
 * @param decodeWorkerArgs command-line arguments for every decode worker (PD only)
 * @param routerArgs command-line arguments for the router (e.g. {@code --policy cache_aware}); the
 *     factory adds {@code --port 0}, the worker URLs and the tokenizer
 * @param realTokenizer whether router and workers use the bundled Qwen3 tokenizer (otherwise the
 *     mock worker's 4-bytes-per-token stand-in and no ingress tokenization)
 */
public record FleetSpec(int workers, int decodeWorkers, List<String> workerArgs, List<String> decodeWorkerArgs,
        List<String> routerArgs, boolean realTokenizer) {

    public FleetSpec {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1: " + workers);
        }
        if (decodeWorkers < 0) {
            throw new IllegalArgumentException("decodeWorkers must be >= 0: " + decodeWorkers);
        }
        workerArgs = List.copyOf(Objects.requireNonNull(workerArgs, "workerArgs"));
        decodeWorkerArgs = List.copyOf(Objects.requireNonNull(decodeWorkerArgs, "decodeWorkerArgs"));
        routerArgs = List.copyOf(Objects.requireNonNull(routerArgs, "routerArgs"));
    }

    /** {@code workers} regular workers with the real tokenizer. */
    public FleetSpec(int workers, List<String> workerArgs, List<String> routerArgs) {
        this(workers, 0, workerArgs, List.of(), routerArgs, true);
    }

    /** A PD fleet with the real tokenizer. */
    public static FleetSpec pd(int prefillWorkers, List<String> prefillArgs, int decodeWorkers, List<String> decodeArgs,
            List<String> routerArgs) {
        if (decodeWorkers < 1) {
            throw new IllegalArgumentException("a PD fleet needs >= 1 decode worker: " + decodeWorkers);
        }
        return new FleetSpec(prefillWorkers, decodeWorkers, prefillArgs, decodeArgs, routerArgs, true);
    }

    /** Whether this is a prefill/decode disaggregated fleet. */
    public boolean pd() {
        return decodeWorkers > 0;
    }
}
