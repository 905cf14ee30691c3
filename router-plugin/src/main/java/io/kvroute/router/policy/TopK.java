package io.kvroute.router.policy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The first {@code k} items of a list in a total order, sorted, without sorting the whole list: a
 * bounded heap whose root is the worst item kept, so most items cost one comparison. For a total
 * order the result equals {@code sort(order)} then {@code subList(0, k)}. The cache-aware ladder
 * ranks every owner of a matched prefix but keeps only its candidate cap (32 by default); with a
 * prompt that all of 1,024 workers own, a full sort of the owners cost about ten thousand pressure
 * comparisons per request (JFR profile of the {@code fleet-scale} benchmark,
 * docs/benchmarks.md), the heap about one per owner.
 */
final class TopK {
    private TopK() {}

    /**
     * @param items not modified when longer than {@code k}; sorted in place otherwise
     * @param order a total order (ties broken to the end)
     */
    static <T> List<T> first(List<T> items, int k, Comparator<? super T> order) {
        if (items.size() <= k) {
            items.sort(order);
            return items;
        }
        if (k <= 0) {
            return new ArrayList<>();
        }
        PriorityQueue<T> worstFirst = new PriorityQueue<>(k, order.reversed());
        for (T item : items) {
            if (worstFirst.size() < k) {
                worstFirst.add(item);
            } else if (order.compare(item, worstFirst.peek()) < 0) {
                worstFirst.poll();
                worstFirst.add(item);
            }
        }
        List<T> out = new ArrayList<>(worstFirst);
        out.sort(order);
        return out;
    }
}
