package io.kvroute.scheduler.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code hrrn}: token-based Highest Response Ratio Next (after SGLang PR #32911;
 * LightLLM {@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/}).
 * Negative-priority prefill requests first, in queue order; normal requests by
 * {@code waited / uncached} descending, then by arrival sequence ascending (an integer, as LightLLM's request id), where
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
 * <p>Scale: one O(n) key pass plus an O(n log n) primitive sort of packed keys, exact ties and
 * near-ties re-sorted by full score and arrival (see {@link #sortedOrder}), at any queue length; unlike SGLang there is no FCFS fallback above 128 waiting requests (JMH figures in
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
        int[] order = sortedOrder(score, normal, numNormal);
        List<SchedRequest> ordered = new ArrayList<>(n);
        ordered.addAll(high);
        for (int i = 0; i < numNormal; i++) {
            ordered.add(normal[order[i]]);
        }
        return split.join(ordered);
    }

    /** HRRN order of normal requests {@code a} and {@code b}: higher score first, then earlier arrival. */
    private static int compare(int a, int b, double[] score, SchedRequest[] normal) {
        int byScore = Double.compare(score[b], score[a]);
        return byScore != 0 ? byScore : Long.compare(normal[a].arrivalSeq(), normal[b].arrivalSeq());
    }

    /** True when {@code a} may stay before {@code b} (full ties keep their order). */
    private static boolean before(int a, int b, double[] score, SchedRequest[] normal) {
        return compare(a, b, score, normal) <= 0;
    }

    /**
     * Indices of {@code normal[0, n)} in HRRN order. Arrays.sort on packed longs (the upper 32 bits
     * of an order-reversed score, then the index) is the fast path; it is exact except inside runs
     * whose scores share those 32 bits (relative difference below ~1e-6), which are then re-sorted
     * exactly by full score and arrival. Measured at 10k on the loaded 2-core box (best of 300 calls):
     * this 0.47-ms sort vs 1.2-1.5 ms for an index merge sort and 1.7-2.2 ms for Arrays.sort over
     * key objects with a Comparator (docs/benchmarks-scheduler.md).
     */
    private static int[] sortedOrder(double[] score, SchedRequest[] normal, int n) {
        long[] packed = new long[n];
        for (int i = 0; i < n; i++) {
            // scores are >= 0, whose raw bits order like the values; MAX - bits reverses the order
            long descending = Long.MAX_VALUE - Double.doubleToRawLongBits(score[i]);
            packed[i] = (descending & 0xFFFF_FFFF_0000_0000L) | i;
        }
        java.util.Arrays.sort(packed);
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = (int) packed[i];
        }
        int runStart = 0;
        for (int i = 1; i <= n; i++) {
            if (i == n || (packed[i] >>> 32) != (packed[runStart] >>> 32)) {
                if (i - runStart > 1) {
                    sortRunExactly(order, runStart, i, score, normal);
                }
                runStart = i;
            }
        }
        return order;
    }

    /** Runs are tiny except for many equal scores (e.g. everyone arrived at the same counter). */
    private static void sortRunExactly(int[] a, int from, int to, double[] score, SchedRequest[] normal) {
        if (to - from > 16) {
            Integer[] run = new Integer[to - from];
            for (int i = from; i < to; i++) {
                run[i - from] = a[i];
            }
            java.util.Arrays.sort(run, (x, y) -> compare(x, y, score, normal)); // stable: full ties keep input order
            for (int i = from; i < to; i++) {
                a[i] = run[i - from];
            }
            return;
        }
        for (int i = from + 1; i < to; i++) {
            int x = a[i];
            int j = i - 1;
            while (j >= from && !before(a[j], x, score, normal)) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = x;
        }
    }
}
