package io.kvroute.router.lora;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.function.ToIntFunction;
import java.util.random.RandomGenerator;

/**
 * Where a request for a LoRA adapter goes when no worker holds its prefix: the candidate with the least
 * {@code load + weight * (1 - affinity)}, where affinity is {@link AdapterAffinity}'s score and load counts
 * requests. The weight ({@code --lora-affinity-weight}) is what the adapter's residency is worth in queued
 * requests: with 8, a worker that must evict an adapter (affinity 0) is chosen only when the resident
 * worker has 8 more requests than it, one with a free slot (0.8) when it has 1.6 more. 0 makes placement
 * adapter-blind (least load alone). This is llm-d's weighted sum of a LoRA-affinity and a queue scorer
 * (llm-d {@code pkg/epp/framework/plugins/scheduling/scorer/loraaffinity/lora_affinity.go} and
 * {@code .../scorer/queuedepth}), in request units so the weight reads as a queue length.
 *
 * <p>Exact ties are broken uniformly at random (the injected generator), so idle workers share new
 * adapters evenly. Pure and stateless apart from the generator; thread-safe with a per-thread generator.
 */
public final class AdapterPlacement {

    /** The chosen worker and its affinity score. */
    public record Placement(Worker worker, double score) {}

    private AdapterPlacement() {}

    /**
     * @param candidates never empty
     * @param loadRequests requests queued or running on a worker, by worker id
     * @param weightRequests what full residency is worth, in requests; at least 0
     */
    public static Placement choose(List<Worker> candidates, AdapterView view, String adapter,
            ToIntFunction<String> loadRequests, double weightRequests, RandomGenerator random) {
        requireNonNull(view, "view");
        requireNonNull(adapter, "adapter");
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("no candidates");
        }
        Worker best = null;
        double bestCost = Double.POSITIVE_INFINITY;
        double bestScore = 0;
        int ties = 0;
        for (Worker w : candidates) {
            double score = AdapterAffinity.score(view, w.id(), adapter);
            double cost = loadRequests.applyAsInt(w.id()) + weightRequests * (1.0 - score);
            if (cost < bestCost) {
                best = w;
                bestCost = cost;
                bestScore = score;
                ties = 1;
            } else if (cost == bestCost && random.nextInt(++ties) == 0) {
                best = w; // reservoir sampling: each of the tied workers with probability 1/ties
                bestScore = score;
            }
        }
        return new Placement(best, bestScore);
    }
}
