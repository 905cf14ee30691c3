package io.kvroute.scheduler.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code promote_shortest}: negative-priority prefill requests first, in queue order; then the ONE
 * normal request with the fewest remaining uncached prompt tokens (smallest arrival sequence on ties) moves to the
 * head of the normal group; every other request keeps its relative order. A deliberately limited
 * reorder (LightLLM's {@code PromoteShortestPrefillStrategy} in
 * {@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/}), meant for PD
 * prefill nodes.
 */
final class PromoteShortestStrategy implements PrefillQueueStrategy {

    @Override
    public String name() {
        return "promote_shortest";
    }

    @Override
    public List<SchedRequest> reorder(List<SchedRequest> ready, long processedPrefillTokens) {
        ReadySplit split = new ReadySplit(ready);
        List<SchedRequest> high = new ArrayList<>();
        List<SchedRequest> normal = new ArrayList<>(split.prefill.size());
        int shortest = -1;
        int shortestRemaining = Integer.MAX_VALUE;
        for (SchedRequest r : split.prefill) {
            if (r.inferHighPriority() < 0) {
                high.add(r);
                continue;
            }
            int remaining = r.remainingPrefillTokens();
            if (remaining < shortestRemaining
                    || (remaining == shortestRemaining && r.arrivalSeq() < normal.get(shortest).arrivalSeq())) {
                shortestRemaining = remaining; // ties: the earliest arrival wins
                shortest = normal.size();
            }
            normal.add(r);
        }
        List<SchedRequest> ordered = new ArrayList<>(split.prefill.size());
        ordered.addAll(high);
        if (shortest >= 0) {
            ordered.add(normal.get(shortest));
            for (int i = 0; i < normal.size(); i++) {
                if (i != shortest) {
                    ordered.add(normal.get(i));
                }
            }
        }
        return split.join(ordered);
    }
}
