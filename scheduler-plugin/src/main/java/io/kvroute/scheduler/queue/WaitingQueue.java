package io.kvroute.scheduler.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * The engine's queue order. {@code high_priority_request} requests are inserted before the first
 * normal request, FIFO among themselves; normal requests are appended. A request keeps its place
 * while it is prefilled chunk by chunk (LightLLM keeps {@code infer_req_ids} in admission order;
 * there is no rotation).
 *
 * <p>Invariant: the first {@code numHigh} entries are exactly the high-priority ones.
 * Concurrency: engine thread only.
 */
public final class WaitingQueue<T> {

    private final List<T> entries = new ArrayList<>();
    private final Predicate<T> isHighPriority;
    private int numHigh;

    public WaitingQueue(Predicate<T> isHighPriority) {
        this.isHighPriority = isHighPriority;
    }

    public void add(T entry) {
        if (isHighPriority.test(entry)) {
            entries.add(numHigh++, entry);
        } else {
            entries.add(entry);
        }
    }

    public boolean remove(T entry) {
        int i = entries.indexOf(entry);
        if (i < 0) {
            return false;
        }
        entries.remove(i);
        if (i < numHigh) {
            numHigh--;
        }
        return true;
    }

    /** Removes every entry matching {@code filter}, in one pass. */
    public void removeIf(Predicate<T> filter) {
        List<T> kept = new ArrayList<>(entries.size());
        int high = 0;
        for (int i = 0; i < entries.size(); i++) {
            T e = entries.get(i);
            if (!filter.test(e)) {
                kept.add(e);
                if (i < numHigh) {
                    high++;
                }
            }
        }
        entries.clear();
        entries.addAll(kept);
        numHigh = high;
    }

    public int size() {
        return entries.size();
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** Read-only view in queue order; invalidated by the next mutation. */
    public List<T> view() {
        return Collections.unmodifiableList(entries);
    }
}
