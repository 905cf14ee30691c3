package io.kvroute.scheduler.queue;

import java.util.Comparator;
import java.util.List;

/**
 * {@code default}: prefill requests by inference priority (more negative first), then by arrival
 * sequence (FCFS). High-priority-request admission order is kept: within one inference priority the
 * queue's own order (admission-high-priority requests inserted first) is the arrival order the
 * engine saw, so the tie-break by arrival sequence is applied within each admission group.
 */
final class DefaultStrategy implements PrefillQueueStrategy {

    /** Inference priority, then admission group (high_priority_request first), then arrival. */
    private static final Comparator<SchedRequest> ORDER = Comparator.comparingInt(SchedRequest::inferHighPriority)
            .thenComparing(r -> !r.highPriorityRequest())
            .thenComparingLong(SchedRequest::arrivalSeq);

    @Override
    public String name() {
        return "default";
    }

    @Override
    public List<SchedRequest> reorder(List<SchedRequest> ready, long processedPrefillTokens) {
        ReadySplit split = new ReadySplit(ready);
        split.prefill.sort(ORDER);
        return split.join(split.prefill);
    }
}
