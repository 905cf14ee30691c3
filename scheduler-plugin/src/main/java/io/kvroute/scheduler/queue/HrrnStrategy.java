package io.kvroute.scheduler.queue;

import java.util.ArrayList;
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
 * <p>Scale: one O(n) key pass plus an O(n log n) merge sort of int indices over a double[] of
 * scores (ids compared only on exact ties), at any queue length; unlike SGLang there is no FCFS fallback above 128 waiting requests (JMH figures in
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
        int n = split.prefill.size();
        SchedRequest[] normal = new SchedRequest[n];
        double[] score = new double[n];
        int numNormal = 0;
        for (SchedRequest r : split.prefill) {
            if (r.inferHighPriority() < 0) {
                high.add(r);
                continue;
            }
            long waited = Math.max(0L, processedPrefillTokens - r.arrivalProcessedTokens());
            score[numNormal] = (double) waited / r.bindHrrnUncachedTokensOnce();
            normal[numNormal++] = r;
        }
        int[] order = new int[numNormal];
        for (int i = 0; i < numNormal; i++) {
            order[i] = i;
        }
        // Primitive index merge sort instead of Arrays.sort over key objects with a Comparator:
        // 10k requests, best of 300 calls, 1.23-1.46 ms vs 1.66-2.24 ms on the loaded 2-core box
        // (docs/benchmarks-scheduler.md), and no per-request key allocation.
        mergeSort(order, new int[numNormal], 0, numNormal, score, normal);
        List<SchedRequest> ordered = new ArrayList<>(n);
        ordered.addAll(high);
        for (int i = 0; i < numNormal; i++) {
            ordered.add(normal[order[i]]);
        }
        return split.join(ordered);
    }

    /** True when normal request {@code a} goes before {@code b}: higher score, then smaller id. */
    private static boolean before(int a, int b, double[] score, SchedRequest[] normal) {
        int byScore = Double.compare(score[b], score[a]);
        if (byScore != 0) {
            return byScore < 0;
        }
        return normal[a].requestId().compareTo(normal[b].requestId()) <= 0;
    }

    private static void mergeSort(int[] a, int[] tmp, int from, int to, double[] score, SchedRequest[] normal) {
        int len = to - from;
        if (len < 24) { // insertion sort for short runs
            for (int i = from + 1; i < to; i++) {
                int x = a[i];
                int j = i - 1;
                while (j >= from && !before(a[j], x, score, normal)) {
                    a[j + 1] = a[j];
                    j--;
                }
                a[j + 1] = x;
            }
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid, score, normal);
        mergeSort(a, tmp, mid, to, score, normal);
        if (before(a[mid - 1], a[mid], score, normal)) {
            return; // already ordered
        }
        System.arraycopy(a, from, tmp, from, len);
        int i = from;
        int j = mid;
        for (int k = from; k < to; k++) {
            if (j >= to || (i < mid && before(tmp[i], tmp[j], score, normal))) {
                a[k] = tmp[i++];
            } else {
                a[k] = tmp[j++];
            }
        }
    }
}
