package io.kvroute.scheduler.queue;

import java.util.Comparator;
import java.util.List;

/** {@code default}: stable sort of prefill requests by inference priority (more negative first); FCFS otherwise. */
final class DefaultStrategy implements PrefillQueueStrategy {

    @Override
    public String name() {
        return "default";
    }

    @Override
    public List<SchedRequest> reorder(List<SchedRequest> ready, long processedPrefillTokens) {
        ReadySplit split = new ReadySplit(ready);
        // List.sort is a stable merge sort (TimSort): equal priorities keep queue order.
        split.prefill.sort(Comparator.comparingInt(SchedRequest::inferHighPriority));
        return split.join(split.prefill);
    }
}
