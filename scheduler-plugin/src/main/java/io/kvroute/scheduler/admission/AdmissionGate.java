package io.kvroute.scheduler.admission;

import static java.util.Objects.requireNonNull;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedList;
import java.util.List;
import java.util.ListIterator;

/**
 * The node self request limit: a request enters the engine only when it gets a request slot and a
 * KV reservation; one that cannot within {@code resource-wait-timeout-secs} is answered busy (429
 * {@code server_busy}) before any output. Follows LightLLM's node resource wait.
 *
 * <p>Order: pending requests are admitted head-first; admission-high-priority ones are queued ahead
 * of normal ones (FIFO among themselves). Normal ones are FIFO within one request priority and a
 * lower priority value goes ahead of a higher one (all are 0 unless the engine runs priority
 * scheduling, so FIFO by default). The head blocks the others (no overtaking by smaller requests),
 * so a large request cannot starve behind small ones of its priority. Expiry is checked for every
 * pending request.
 *
 * <p>Invariants: {@code 0 <= usedSlots <= maxRequestSlots}, {@code 0 <= reservedKvTokens <=
 * kvCapacityTokens} while the limit is on. A request whose own reservation exceeds the capacity can
 * never be admitted and is answered busy at once. Concurrency: engine thread only; time is passed in.
 */
public final class AdmissionGate<T> {

    private final AdmissionConfig config;
    private final Deque<Pending<T>> highPending = new ArrayDeque<>();
    /** In (request priority, offer) order: a LinkedList so a prioritised offer can be inserted mid-queue. */
    private final LinkedList<Pending<T>> normalPending = new LinkedList<>();
    private int usedSlots;
    private long reservedKvTokens;

    public AdmissionGate(AdmissionConfig config) {
        this.config = requireNonNull(config, "config");
    }

    /** Queues a request that needs {@code kvTokens} of KV reservation. */
    public void offer(T request, long kvTokens, boolean highPriority, long nowNanos) {
        offer(request, kvTokens, highPriority, 0, nowNanos);
    }

    /**
     * As above, with the request's priority in normal form (lower first): a normal request goes behind
     * every pending one of the same or a lower value and ahead of those with a higher value.
     */
    public void offer(T request, long kvTokens, boolean highPriority, int requestPriority, long nowNanos) {
        Pending<T> p = new Pending<>(request, kvTokens, nowNanos, requestPriority);
        if (highPriority) {
            highPending.addLast(p);
            return;
        }
        ListIterator<Pending<T>> it = normalPending.listIterator(normalPending.size());
        while (it.hasPrevious()) {
            if (it.previous().requestPriority <= requestPriority) {
                it.next();
                break;
            }
        }
        it.add(p);
    }

    /** Admits what fits and expires what waited too long; call once per engine iteration. */
    public Outcome<T> poll(long nowNanos) {
        return poll(nowNanos, EntryBudget.unlimited());
    }

    /**
     * As {@link #poll(long)}, and each admitted request must also fit {@code budget}; the first one
     * it refuses blocks the rest. While the budget holds requests back, none of them is expired:
     * they wait in the router's queue, not for a slot or KV.
     */
    public Outcome<T> poll(long nowNanos, EntryBudget<T> budget) {
        requireNonNull(budget, "budget");
        List<T> admitted = new ArrayList<>();
        List<Rejected<T>> rejected = new ArrayList<>();
        boolean open = admitFrom(highPending, admitted, rejected, budget);
        if (open && highPending.isEmpty()) {
            open = admitFrom(normalPending, admitted, rejected, budget);
        }
        long timeoutNanos = config.resourceWaitTimeoutNanos();
        // Requests held back by the entry budget wait in the router's ordinary queue (LightLLM's
        // waiting list), not for node resources: the resource wait only runs while the budget is open.
        if (open && timeoutNanos >= 0) {
            expire(highPending, nowNanos, timeoutNanos, rejected);
            expire(normalPending, nowNanos, timeoutNanos, rejected);
        }
        return new Outcome<>(admitted, rejected);
    }

    /** Returns a finished or aborted request's slot and reservation. */
    public void release(long kvTokens) {
        if (!config.nodeSelfRequestLimit()) {
            return;
        }
        if (usedSlots <= 0 || kvTokens > reservedKvTokens) {
            throw new IllegalStateException("release beyond reservations: slots=" + usedSlots
                    + " reserved=" + reservedKvTokens + " releasing=" + kvTokens);
        }
        usedSlots--;
        reservedKvTokens -= kvTokens;
    }

    /** Drops a pending request (client gone); true when it was still pending. */
    public boolean cancel(T request) {
        return highPending.removeIf(p -> p.request == request) | normalPending.removeIf(p -> p.request == request);
    }

    /** Removes and returns every pending request, high priority first (engine shutdown). */
    public List<T> drainPending() {
        List<T> out = new ArrayList<>(numPending());
        highPending.forEach(p -> out.add(p.request));
        normalPending.forEach(p -> out.add(p.request));
        highPending.clear();
        normalPending.clear();
        return out;
    }

    public int numPending() {
        return highPending.size() + normalPending.size();
    }

    public int usedSlots() {
        return usedSlots;
    }

    public long reservedKvTokens() {
        return reservedKvTokens;
    }

    /** Admits head-first; false when the entry budget refused a request (admission stops there). */
    private boolean admitFrom(Deque<Pending<T>> queue, List<T> admitted, List<Rejected<T>> rejected,
            EntryBudget<T> budget) {
        while (!queue.isEmpty()) {
            Pending<T> head = queue.peekFirst();
            if (!config.nodeSelfRequestLimit()) {
                if (!budget.tryEnter(head.request)) {
                    return false;
                }
                admitted.add(queue.pollFirst().request);
                continue;
            }
            if (head.kvTokens > config.kvCapacityTokens()) {
                queue.pollFirst();
                rejected.add(new Rejected<>(head.request, 0, "needs " + head.kvTokens
                        + " KV tokens, more than the engine's capacity " + config.kvCapacityTokens()));
                continue;
            }
            if (usedSlots >= config.maxRequestSlots()
                    || reservedKvTokens + head.kvTokens > config.kvCapacityTokens()) {
                return true;
            }
            if (!budget.tryEnter(head.request)) {
                return false;
            }
            queue.pollFirst();
            usedSlots++;
            reservedKvTokens += head.kvTokens;
            admitted.add(head.request);
        }
        return true;
    }

    private static <T> void expire(Deque<Pending<T>> queue, long nowNanos, long timeoutNanos,
            List<Rejected<T>> rejected) {
        for (Iterator<Pending<T>> it = queue.iterator(); it.hasNext(); ) {
            Pending<T> p = it.next();
            long waitedNanos = nowNanos - p.offeredAtNanos;
            if (waitedNanos >= timeoutNanos) {
                it.remove();
                rejected.add(new Rejected<>(p.request, waitedNanos / 1_000_000, "no request slot or KV"));
            }
        }
    }

    private record Pending<T>(T request, long kvTokens, long offeredAtNanos, int requestPriority) {}

    /** A request answered busy, with how long it waited. */
    public record Rejected<T>(T request, long waitedMillis, String reason) {}

    /** One poll's result: requests now inside the engine, and requests to answer 429. */
    public record Outcome<T>(List<T> admitted, List<Rejected<T>> rejected) {}
}
