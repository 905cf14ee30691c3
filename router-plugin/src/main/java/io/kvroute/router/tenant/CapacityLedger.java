package io.kvroute.router.tenant;

import java.util.HashMap;
import java.util.Map;

/**
 * Tokens in flight per capacity bin and, within a bin, per class: what {@link QosGate} admits against.
 * A bin is one worker ({@code --qos-capacity-scope worker}: each holds {@code --qos-worker-capacity-tokens})
 * or the whole fleet ({@link #FLEET}, {@code --qos-capacity-scope fleet}: that flag times the usable workers).
 *
 * <p>Room in a bin follows SMG's slots ({@code model_gateway/src/middleware/scheduler/slots.rs}) in tokens:
 * a class may use the bin's capacity less the unused part of every higher class's reservation in that same
 * bin ({@link ClassSpec#reservedTokens} of the bin's capacity). An empty bin always has room for one request,
 * however large: a request bigger than a whole worker is served alone on it rather than never. So a bin is
 * over its capacity only while it holds exactly one request.
 *
 * <p>Bins with nothing in flight are dropped, so the ledger holds only the workers that carry requests.
 * Not thread-safe: the gate serializes every call under its lock.
 */
final class CapacityLedger {

    /** The one bin of fleet-wide capacity. */
    static final String FLEET = "(fleet)";
    private static final PriorityClass[] CLASSES = PriorityClass.values();

    private static final class Bin {
        long inFlightTokens;
        int requests;
        final long[] byClass = new long[CLASSES.length];
    }

    private final Map<String, Bin> bins = new HashMap<>();
    private long totalTokens;

    /** Counts {@code cost} tokens of class {@code c} in flight on {@code bin}. */
    void hold(String bin, PriorityClass c, long cost) {
        Bin b = bins.computeIfAbsent(bin, k -> new Bin());
        b.inFlightTokens += cost;
        b.byClass[c.ordinal()] += cost;
        b.requests++;
        totalTokens += cost;
    }

    /** Takes back a {@link #hold}. */
    void release(String bin, PriorityClass c, long cost) {
        Bin b = bins.get(bin);
        if (b == null || b.requests == 0 || b.byClass[c.ordinal()] < cost) {
            throw new IllegalStateException("no " + cost + " tokens of class " + c + " held on " + bin);
        }
        b.inFlightTokens -= cost;
        b.byClass[c.ordinal()] -= cost;
        b.requests--;
        totalTokens -= cost;
        if (b.requests == 0) {
            bins.remove(bin);
        }
    }

    /** Whether {@code cost} more tokens of class {@code c} fit in {@code bin} of {@code capacity} tokens. */
    boolean fits(String bin, PriorityClass c, long cost, long capacity, boolean ignoreReservations, TenantDirectory dir) {
        Bin b = bins.get(bin);
        if (b == null) {
            return capacity > 0; // an empty bin always takes one request
        }
        long limit = capacity - (ignoreReservations ? 0 : heldBack(b, c, capacity, dir));
        return b.inFlightTokens + cost <= limit;
    }

    /**
     * Tokens of class {@code c} or below that must leave {@code bin} before {@code cost} more of class {@code c}
     * {@link #fits} there: 0 when they fit now, {@link Long#MAX_VALUE} when nothing ever fits (no capacity). Leaving
     * tokens of those classes does not change what the classes above {@code c} hold back, so the rule is exact:
     * freeing at least this many makes it fit, freeing fewer does not. Freeing everything empties the bin, and an
     * empty bin takes one request however large, so this is never more than the bin holds: a request larger than
     * the bin's room fits once the bin is emptied.
     */
    long shortfall(String bin, PriorityClass c, long cost, long capacity, TenantDirectory dir) {
        if (capacity <= 0) {
            return Long.MAX_VALUE;
        }
        Bin b = bins.get(bin);
        if (b == null) {
            return 0;
        }
        long overLimit = b.inFlightTokens + cost - (capacity - heldBack(b, c, capacity, dir));
        return Math.min(Math.max(0, overLimit), b.inFlightTokens);
    }

    /** Unused reservations of the classes above {@code c} in bin {@code b}. */
    private static long heldBack(Bin b, PriorityClass c, long capacity, TenantDirectory dir) {
        long held = 0;
        for (PriorityClass k : PriorityClass.highToLow()) {
            if (k == c) {
                break;
            }
            held += Math.max(0, dir.classSpec(k).reservedTokens(capacity) - b.byClass[k.ordinal()]);
        }
        return held;
    }

    long inFlightTokens(String bin) {
        Bin b = bins.get(bin);
        return b == null ? 0 : b.inFlightTokens;
    }

    int requests(String bin) {
        Bin b = bins.get(bin);
        return b == null ? 0 : b.requests;
    }

    /** Tokens in flight over all bins. */
    long totalTokens() {
        return totalTokens;
    }

    /** Tokens in flight of class {@code c} over all bins. */
    long classTokens(PriorityClass c) {
        long sum = 0;
        for (Bin b : bins.values()) {
            sum += b.byClass[c.ordinal()];
        }
        return sum;
    }

    /** Tokens in flight per bin (a copy, for tests and the gate's gauges). */
    Map<String, Long> byBin() {
        Map<String, Long> m = new HashMap<>();
        bins.forEach((k, b) -> m.put(k, b.inFlightTokens));
        return m;
    }
}
