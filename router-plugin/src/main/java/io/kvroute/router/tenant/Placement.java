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
 * request (same fair order, same queue timeout, same strict order: a head waiting for its holder holds the classes
 * below as a head that fits nowhere would, for at most the bound), may only be placed on its holder until the bound
 * passes, and then anywhere with room. A request waits for its holder at most once. Under PD the candidates are the
 * decode workers that hold the tokens, so the holder is the decode worker with the most of the prompt cached; where
 * the prefill runs is the dispatch's choice and is not waited for.
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
        String holder = t.holderWaitFor;
        if (holder != null && now - t.holderWaitUntilNanos < 0 && bins.contains(holder)) {
            return roomFor(t, List.of(holder), ignoreReservations, null, dir);
        }
        String bin = roomFor(t, bins, ignoreReservations, prefer, dir);
        if (bin == null || !mayWait || holder != null || holderWaitNanos == 0 || t.candidates == null) {
            return bin;
        }
        holder = holderOf(t, bins);
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
        return null;
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
