package io.kvroute.scheduler.queue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code hrrn}: token-based Highest Response Ratio Next (seed 002, after SGLang PR #32911).
 * Negative-priority prefill requests first, in queue order; normal requests by
 * {@code waited / uncached} descending, then by request id ascending, where
 * {@code waited = max(0, processed - arrivalProcessed)} and {@code uncached = max(1, inputLen -
 * kvLen)} bound on the request's first HRRN ordering and never changed by later chunked-prefill
 * rounds. At constant prefill throughput this equals classic HRRN {@code 1 + wait/service} without
 * wall clocks, so TP ranks agree.
 *
 * <p>Binding: the bound service cost lives in a package-private write-once slot on
 * {@link SchedRequest} owned by this class ({@code bindHrrnUncachedTokensOnce}), not in a map here.
 * Reason: a map keyed by request would need pruning when requests finish or abort (a leak or an
 * O(n) rebuild per step at 10k requests), while the slot dies with its request and costs one field
 * read. The slot never changes the request's progress state, which is what the contract forbids.
 *
 * <p>Scale: one O(n) key pass plus an O(n log n) sort of primitive-keyed entries, at any queue
 * length; unlike SGLang there is no FCFS fallback above 128 waiting requests (JMH figures in
 * docs/benchmarks-scheduler.md). Ratios are compared as doubles: IEEE division is correctly rounded,
 * so equal ratios (1/3 and 2/6) compare equal and every rank computes the same keys.
 */
final class HrrnStrategy implements PrefillQueueStrategy {

    @Override
    public String name() {
        return "hrrn";
    }

    @Override
    public List<SchedRequest> reorder(List<SchedRequest> ready, long processedPrefillTokens) {
        ReadySplit split = new ReadySplit(ready);
        List<SchedRequest> high = new ArrayList<>();
        Keyed[] normal = new Keyed[split.prefill.size()];
        int numNormal = 0;
        for (SchedRequest r : split.prefill) {
            if (r.inferHighPriority() < 0) {
                high.add(r);
                continue;
            }
            long waited = Math.max(0L, processedPrefillTokens - r.arrivalProcessedTokens());
            normal[numNormal++] = new Keyed(r, (double) waited / r.bindHrrnUncachedTokensOnce());
        }
        Arrays.sort(normal, 0, numNormal, HrrnStrategy::compare);
        List<SchedRequest> ordered = new ArrayList<>(split.prefill.size());
        ordered.addAll(high);
        for (int i = 0; i < numNormal; i++) {
            ordered.add(normal[i].request);
        }
        return split.join(ordered);
    }

    private static int compare(Keyed a, Keyed b) {
        int byScore = Double.compare(b.score, a.score); // descending
        return byScore != 0 ? byScore : a.request.requestId().compareTo(b.request.requestId());
    }

    private static final class Keyed {
        final SchedRequest request;
        final double score;

        Keyed(SchedRequest request, double score) {
            this.request = request;
            this.score = score;
        }
    }
}
