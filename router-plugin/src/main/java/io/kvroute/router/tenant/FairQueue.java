package io.kvroute.router.tenant;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToLongFunction;

/**
 * The waiting requests of one priority class, served by token-weighted virtual counters per tenant
 * (VTC: Sheng et al., "Fairness in Serving Large Language Models", OSDI 2024; the algorithm follows
 * the artifact's {@code slora/server/router/vtc_req_queue.py}):
 * <ul>
 *   <li>every tenant has a counter of the service it received, divided by its weight;
 *   <li>the next request is the head of the backlogged tenant with the smallest counter;
 *   <li>a tenant that becomes active (something queued or in flight) is lifted to the smallest
 *       counter of the other active tenants, so idle time banks no credit; with nobody active it is
 *       lifted to the last such minimum ({@link #virtualFloor}).
 * </ul>
 * Locality inside the fairness slack (after D²LPM, Cao et al., arXiv 2501.14312): among the
 * backlogged tenants whose counter is within {@code slack} of the minimum (at most
 * {@link #LOCALITY_SCAN} of them), {@link #pick} prefers the one whose head request has the longest
 * cached prefix on the worker that freed capacity; with no prefix anywhere it is the minimum. The
 * service gap between backlogged tenants stays bounded by the slack plus VTC's own bound.
 *
 * <p>The owner may pass over tenants whose head it cannot serve yet ({@link #pick(ToLongFunction, Set)}: the
 * gate's heads waiting for their prefix holder): a passed tenant keeps its counter and its queue, and so its place;
 * the tenants served meanwhile are charged, so it is the minimum again once it may be served.
 *
 * <p>Idle tenants whose counter is at or below the floor carry no information (a lift would restore
 * them) and are pruned, so the structure holds at most the active tenants plus the idle ones above
 * the floor.
 *
 * <p>Not thread-safe: the owner ({@link QosGate}) serializes every call under its lock.
 */
final class FairQueue<T> {

    /** Bounds the locality scan per pick: prefix lookups for at most this many tenant heads. */
    static final int LOCALITY_SCAN = 16;
    private static final int PRUNE_SLACK = 1024;

    private static final Comparator<Tenant<?>> BY_COUNTER =
            Comparator.<Tenant<?>>comparingDouble(t -> t.counter).thenComparing(t -> t.name);

    private final double slack;
    private final Map<String, Tenant<T>> tenants = new HashMap<>();
    private final TreeSet<Tenant<T>> backlogged = new TreeSet<>(BY_COUNTER);
    private final TreeSet<Tenant<T>> active = new TreeSet<>(BY_COUNTER);
    private double virtualFloor;
    private int size;
    /** Tenants held before the next prune: doubling keeps pruning amortized O(1) per call. */
    private int pruneAt = PRUNE_SLACK;

    FairQueue(double slack) {
        if (!(slack >= 0)) {
            throw new IllegalArgumentException("slack must be >= 0 (got " + slack + ")");
        }
        this.slack = slack;
    }

    /** A pick: the tenant and its head request, and whether locality moved the pick off the minimum. */
    record Pick<T>(String tenant, T item, boolean byLocality) {}

    private static final class Tenant<T> {
        final String name;
        double weight = 1;
        double counter;
        int inFlight;
        final ArrayDeque<T> queue = new ArrayDeque<>();

        Tenant(String name) {
            this.name = name;
        }

        boolean isActive() {
            return inFlight > 0 || !queue.isEmpty();
        }
    }

    /** Queues {@code item} at the tail of {@code tenant}'s queue (weight as of now). */
    void add(String tenant, double weight, T item) {
        Tenant<T> t = tenant(tenant, weight);
        boolean wasActive = t.isActive();
        boolean wasBacklogged = !t.queue.isEmpty();
        if (!wasActive) {
            lift(t);
        }
        if (wasBacklogged) {
            t.queue.addLast(item);
        } else {
            if (wasActive) {
                active.remove(t);
            }
            t.queue.addLast(item);
            backlogged.add(t);
            active.add(t);
        }
        size++;
    }

    /**
     * The next request to serve, without removing it: the minimum-counter tenant's head, or within
     * the slack the head with the most {@code cachedTokens} (null: no locality); null when empty.
     */
    Pick<T> pick(ToLongFunction<T> cachedTokens) {
        return pick(cachedTokens, Set.of());
    }

    /**
     * {@link #pick(ToLongFunction)} as if the tenants in {@code passed} had nothing queued: the owner passes over
     * heads it may not serve yet (waiting for their prefix holder) without taking them out of the order, so they
     * keep their counters and are picked again first once they may be served. Null when every backlogged tenant
     * is passed. Costs a step per passed tenant ahead of the pick.
     */
    Pick<T> pick(ToLongFunction<T> cachedTokens, Set<String> passed) {
        Tenant<T> min = null;
        Tenant<T> best = null;
        long bestCached = 0;
        int scanned = 0;
        for (Tenant<T> t : backlogged) {
            if (passed.contains(t.name)) {
                continue;
            }
            if (min == null) {
                min = t;
                best = t;
                if (cachedTokens == null || slack == 0) {
                    break;
                }
                bestCached = cachedTokens.applyAsLong(t.queue.peekFirst());
            } else {
                if (scanned == LOCALITY_SCAN || t.counter > min.counter + slack) {
                    break;
                }
                long cached = cachedTokens.applyAsLong(t.queue.peekFirst());
                if (cached > bestCached) {
                    best = t;
                    bestCached = cached;
                }
            }
            scanned++;
        }
        return min == null ? null : new Pick<>(best.name, best.queue.peekFirst(), best != min);
    }

    /**
     * Takes {@code item} (the head {@link #pick} returned) off its tenant's queue and counts it in
     * flight; {@link #finished} must follow once it ends.
     */
    void admitHead(String tenant, T item) {
        Tenant<T> t = tenants.get(tenant);
        if (t == null || t.queue.peekFirst() != item) {
            throw new IllegalStateException("not the head of tenant " + tenant + ": " + item);
        }
        reindex(t, () -> {
            t.queue.pollFirst();
            t.inFlight++;
        });
        size--;
    }

    /** Counts a request of {@code tenant} that was admitted without waiting as in flight (lifting it if it was idle). */
    void admitDirect(String tenant, double weight) {
        Tenant<T> t = tenant(tenant, weight);
        if (!t.isActive()) {
            lift(t);
        }
        reindex(t, () -> t.inFlight++);
    }

    /** A request of {@code tenant} counted in flight ended. */
    void finished(String tenant) {
        Tenant<T> t = tenants.get(tenant);
        if (t == null || t.inFlight == 0) {
            throw new IllegalStateException("no request of tenant " + tenant + " in flight");
        }
        reindex(t, () -> t.inFlight--);
        maybePrune();
    }

    /** Removes a waiting {@code item} (timed out, client gone); false when it is not queued. */
    boolean remove(String tenant, T item) {
        Tenant<T> t = tenants.get(tenant);
        if (t == null || !t.queue.contains(item)) {
            return false;
        }
        reindex(t, () -> t.queue.remove(item));
        size--;
        maybePrune();
        return true;
    }

    /** Adds {@code weightedTokens} of service to {@code tenant} (divided by its weight); negative refunds. */
    void charge(String tenant, double weightedTokens) {
        Tenant<T> t = tenants.get(tenant);
        if (t == null) {
            return; // pruned: it had no service above the floor worth keeping
        }
        reindex(t, () -> t.counter = Math.max(0, t.counter + weightedTokens / t.weight));
    }

    /** The tenant's counter (service per unit of weight), 0 when unknown. */
    double counter(String tenant) {
        Tenant<T> t = tenants.get(tenant);
        return t == null ? 0 : t.counter;
    }

    int size() {
        return size;
    }

    /** Waiting items of one tenant (0 when unknown); O(1). */
    int size(String tenant) {
        Tenant<T> t = tenants.get(tenant);
        return t == null ? 0 : t.queue.size();
    }

    boolean isEmpty() {
        return size == 0;
    }

    int backloggedTenants() {
        return backlogged.size();
    }

    /** Tenants the structure holds (active ones and idle ones above the floor). */
    int trackedTenants() {
        return tenants.size();
    }

    double virtualFloor() {
        return virtualFloor;
    }

    /** The waiting items of one tenant, oldest first (for timeouts and tests). */
    Iterable<T> queued(String tenant) {
        Tenant<T> t = tenants.get(tenant);
        return t == null ? java.util.List.of() : t.queue;
    }

    private Tenant<T> tenant(String name, double weight) {
        Tenant<T> t = tenants.computeIfAbsent(name, Tenant::new);
        if (t.weight != weight) {
            reindex(t, () -> t.weight = weight);
        }
        return t;
    }

    private void lift(Tenant<T> t) {
        double floor = active.isEmpty() ? virtualFloor : active.first().counter;
        t.counter = Math.max(t.counter, floor);
    }

    private double minActiveCounter() {
        return active.isEmpty() ? virtualFloor : active.first().counter;
    }

    /** Applies {@code change} to {@code t} while keeping both ordered sets consistent with its counter and state. */
    private void reindex(Tenant<T> t, Runnable change) {
        backlogged.remove(t);
        boolean wasActive = active.remove(t);
        change.run();
        if (!t.queue.isEmpty()) {
            backlogged.add(t);
        }
        if (t.isActive()) {
            active.add(t);
        }
        if (wasActive && !t.isActive() && active.isEmpty()) {
            virtualFloor = Math.max(virtualFloor, t.counter); // the last active counter seeds the next lift
        }
    }

    /**
     * Drops idle tenants at or below the floor once the map has doubled since the last prune. A scan on
     * every call while many idle tenants sat above the floor cost O(tenants) per request: 713 us per
     * request at 10,000 tenants against 4.3 us with doubling (QosGateBench.contended, on a loaded 2-core box).
     */
    private void maybePrune() {
        if (tenants.size() <= pruneAt) {
            return;
        }
        double floor = minActiveCounter();
        tenants.values().removeIf(t -> !t.isActive() && t.counter <= floor);
        pruneAt = Math.max(PRUNE_SLACK, 2 * tenants.size());
    }
}
