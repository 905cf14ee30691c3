package io.kvroute.router.tenant;

import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Where an admitted request's tokens go: the capacity bin with room for it, and the bounded wait for its prefix
 * holder under per-worker capacity.
 *
 * <p>Placement picks, among the bins with room, the one with the most of the prompt cached, then the least tokens in
 * flight. Under per-worker capacity that alone sends a request whose prefix holder (the candidate with the most of its
 * prompt cached) is full onto another worker at once, to run there uncached. So, with {@code --qos-holder-wait-ms}
 * above 0, a request whose holder has no room while another candidate has waits for the holder instead, when the
 * holder saves enough prefill to be worth it: at least {@link #MIN_HOLDER_SAVED_TOKENS} more of its prompt cached than
 * on the best worker with room, and at least half its input tokens. It waits in its class's queue like any waiting
 * request (same fair order, same queue timeout), may only be placed on its holder until the bound passes, and then
 * anywhere with room. A request waits for its holder at most once. While it waits only by choice, another of its
 * workers having room ({@link #heldForHolder}), the gate passes over it to serve the next tenant of its class and
 * the classes below; once no other worker has room it fits nowhere and holds them as any such head does (strict
 * order). Under PD the candidates are the decode workers that hold the tokens, so the holder is the decode worker
 * with the most of the prompt cached; where the prefill runs is the dispatch's choice and is not waited for.
 *
 * <p>Not thread-safe: the owner ({@link QosGate}) calls it under its lock only; nothing here blocks or calls out.
 */
final class Placement {

    /** Bounds when a holder is worth waiting for: the fewest cached tokens it must save over the best worker with room. */
    static final long MIN_HOLDER_SAVED_TOKENS = 256;
    private static final List<String> FLEET_BIN = List.of(CapacityLedger.FLEET);

    private final CapacityLedger ledger;
    private final long workerCapacityTokens;
    private final long holderWaitNanos;
    private final QosGate.Fleet fleet;
    /** Queued requests that started a wait for their holder, inside its bound or past it (until they leave the queue). */
    private int waitedQueued;

    Placement(CapacityLedger ledger, long workerCapacityTokens, long holderWaitNanos, QosGate.Fleet fleet) {
        this.ledger = Objects.requireNonNull(ledger, "ledger");
        this.workerCapacityTokens = workerCapacityTokens;
        this.holderWaitNanos = Math.max(0, holderWaitNanos);
        this.fleet = Objects.requireNonNull(fleet, "fleet");
    }

    /** The capacity bins {@code t} may hold on now: its candidate workers, or the fleet's one bin; empty when none is usable. */
    Collection<String> binsOf(QosTicket t) {
        if (t.candidates == null) {
            return fleet.usableWorkers() > 0 ? FLEET_BIN : List.of();
        }
        Collection<String> c = t.candidates.get();
        return c == null ? List.of() : c;
    }

    long capacityOf(String bin) {
        return bin.equals(CapacityLedger.FLEET) ? Math.max(0, fleet.usableWorkers()) * workerCapacityTokens
                : workerCapacityTokens;
    }

    /**
     * The bin {@code t} is admitted onto now, or null to keep it waiting: while it waits for its holder, the holder
     * when it has room; otherwise {@link #roomFor}, unless {@code mayWait} and its holder is worth waiting for (the
     * wait starts now; null).
     */
    String place(QosTicket t, Collection<String> bins, boolean ignoreReservations, String prefer, TenantDirectory dir,
            long now, boolean mayWait) {
        if (insideWait(t, bins, now)) {
            return roomFor(t, List.of(t.holderWaitFor), ignoreReservations, null, dir);
        }
        String bin = roomFor(t, bins, ignoreReservations, prefer, dir);
        if (bin == null || !mayWait || t.holderWaitFor != null || holderWaitNanos == 0 || t.candidates == null) {
            return bin;
        }
        String holder = holderOf(t, bins);
        if (holder == null || holder.equals(bin)
                || ledger.fits(holder, t.priority, t.costTokens, workerCapacityTokens, ignoreReservations, dir)) {
            return bin;
        }
        long saved = t.cachedOn(holder) - t.cachedOn(bin);
        if (saved < MIN_HOLDER_SAVED_TOKENS || 2 * saved < t.inputTokens) {
            return bin;
        }
        t.holderWaitFor = holder;
        t.holderWaitUntilNanos = now + holderWaitNanos;
        waitedQueued++;
        return null;
    }

    /**
     * Whether {@code t}, which {@link #place} left waiting, waits only by choice: inside its wait for its holder while
     * another of {@code bins} has room for it now. False when it fits on none of them (then it blocks as any head does).
     */
    boolean heldForHolder(QosTicket t, Collection<String> bins, boolean ignoreReservations, TenantDirectory dir, long now) {
        return insideWait(t, bins, now) && roomFor(t, bins, ignoreReservations, null, dir) != null;
    }

    /** {@code t} left the queue (admitted, refused, or its client left); call once per request that waited for its holder. */
    void waitedLeftQueue(QosTicket t) {
        if (t.holderWaitFor != null && --waitedQueued < 0) {
            throw new IllegalStateException("more holder waits ended than started: " + t);
        }
    }

    /** Whether a queued request has waited for its holder: a drain may then pass over it and admit others. */
    boolean anyWaitedQueued() {
        return waitedQueued > 0;
    }

    /** Inside its wait for its holder, which is still one of {@code bins}: it may be placed only there. */
    private static boolean insideWait(QosTicket t, Collection<String> bins, long now) {
        return t.holderWaitFor != null && now - t.holderWaitUntilNanos < 0 && bins.contains(t.holderWaitFor);
    }

    /**
     * The bin of {@code bins} where {@code t}'s tokens fit now, or null: {@code prefer} when it fits there, else
     * the one with the most of its prompt cached, then the least tokens in flight, then the first listed.
     */
    String roomFor(QosTicket t, Collection<String> bins, boolean ignoreReservations, String prefer,
            TenantDirectory dir) {
        if (fleet.engineSaturated()) {
            return null;
        }
        String best = null;
        long bestCached = -1;
        long bestLoad = Long.MAX_VALUE;
        for (String bin : bins) {
            if (!ledger.fits(bin, t.priority, t.costTokens, capacityOf(bin), ignoreReservations, dir)) {
                continue;
            }
            if (bin.equals(prefer) || bins.size() == 1) {
                return bin;
            }
            long cached = t.cachedOn(bin);
            long load = ledger.inFlightTokens(bin);
            if (cached > bestCached || (cached == bestCached && load < bestLoad)) {
                best = bin;
                bestCached = cached;
                bestLoad = load;
            }
        }
        return best;
    }

    /** The candidate with the most of {@code t}'s prompt cached (the first listed among equals), or null when none has any. */
    private static String holderOf(QosTicket t, Collection<String> bins) {
        String holder = null;
        long most = 0;
        for (String bin : bins) {
            long cached = t.cachedOn(bin);
            if (cached > most) {
                holder = bin;
                most = cached;
            }
        }
        return holder;
    }
}
