package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link CapacityLedger} under random holds and releases (every class, costs from 1 token to twice a bin, random
 * reservations), checked after every operation against a naive model, a plain list of holds. The invariants live in
 * {@link #check}:
 * <ul>
 *   <li>{@code fits} is the model's rule: an empty bin with capacity takes one request however large; otherwise the
 *       bin's tokens plus the cost stay within its capacity less the unused reservations of the classes above;</li>
 *   <li>{@code shortfall} is exact for what preemption frees (holds of the asking class or below, whose leaving
 *       does not change what the classes above hold back): releasing any set of such holds makes the request fit
 *       if and only if they add up to at least the shortfall. Checked by really releasing each set from the
 *       ledger and holding it again, and on the model. So a request larger than the bin's room has a shortfall of
 *       everything the bin holds (emptied, it fits), never more; a bin with no capacity never fits.</li>
 * </ul>
 */
class CapacityLedgerModelTest {

    private static final List<String> BINS = List.of("w1", "w2");
    private static final long CAPACITY = 1_000;
    /** Bounds the holds per bin, so every set of releasable holds can be tried (at most 2^6). */
    private static final int MAX_HOLDS_PER_BIN = 6;

    private record Hold(String bin, PriorityClass c, long cost) {}

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void fitsAndShortfall_agreeWithANaiveModel_afterEveryOperation(long seed) {
        Random random = new Random(seed);
        TenantDirectory dir = randomReservations(random);
        CapacityLedger ledger = new CapacityLedger();
        List<Hold> holds = new ArrayList<>();
        for (int op = 0; op < 300; op++) {
            String bin = BINS.get(random.nextInt(BINS.size()));
            List<Hold> inBin = holds.stream().filter(h -> h.bin.equals(bin)).toList();
            if (!inBin.isEmpty() && (inBin.size() == MAX_HOLDS_PER_BIN || random.nextInt(3) == 0)) {
                Hold h = inBin.get(random.nextInt(inBin.size()));
                ledger.release(h.bin, h.c, h.cost);
                holds.remove(h);
            } else {
                Hold h = new Hold(bin, randomClass(random), cost(random));
                ledger.hold(h.bin, h.c, h.cost);
                holds.add(h);
            }
            for (int q = 0; q < 3; q++) {
                long capacity = random.nextInt(10) == 0 ? 0 : CAPACITY;
                check(ledger, holds, BINS.get(random.nextInt(BINS.size())), randomClass(random), cost(random), capacity,
                        dir, "seed " + seed + " op " + op);
            }
        }
    }

    private static void check(CapacityLedger ledger, List<Hold> holds, String bin, PriorityClass c, long cost,
            long capacity, TenantDirectory dir, String where) {
        for (boolean ignoreReservations : new boolean[] {false, true}) {
            assertThat(ledger.fits(bin, c, cost, capacity, ignoreReservations, dir))
                    .as(where + ": fits " + c + " " + cost + " in " + bin + " of " + capacity)
                    .isEqualTo(modelFits(holds, bin, c, cost, capacity, ignoreReservations, dir));
        }
        long shortfall = ledger.shortfall(bin, c, cost, capacity, dir);
        List<Hold> releasable = holds.stream().filter(h -> h.bin.equals(bin) && !h.c.above(c)).toList();
        for (int set = 0; set < 1 << releasable.size(); set++) {
            List<Hold> freed = new ArrayList<>();
            long freedTokens = 0;
            for (int i = 0; i < releasable.size(); i++) {
                if ((set & 1 << i) != 0) {
                    freed.add(releasable.get(i));
                    freedTokens += releasable.get(i).cost;
                }
            }
            boolean expected = freedTokens >= shortfall;
            List<Hold> after = new ArrayList<>(holds);
            freed.forEach(after::remove);
            boolean model = modelFits(after, bin, c, cost, capacity, false, dir);
            freed.forEach(h -> ledger.release(h.bin, h.c, h.cost));
            boolean fits = ledger.fits(bin, c, cost, capacity, false, dir);
            freed.forEach(h -> ledger.hold(h.bin, h.c, h.cost));
            if (model != expected || fits != expected) { // the message is built only on a failure: this loop is hot
                assertThat(List.of(model, fits)).as(where + ": " + c + " " + cost + " in " + bin + " of " + capacity
                        + " holding " + holds + ", shortfall " + shortfall + ", freeing " + freed + ": [model, ledger] fit")
                        .containsOnly(expected);
            }
        }
    }

    /** The rule, written plainly from the list of holds. */
    private static boolean modelFits(List<Hold> holds, String bin, PriorityClass c, long cost, long capacity,
            boolean ignoreReservations, TenantDirectory dir) {
        long inFlight = 0;
        Map<PriorityClass, Long> byClass = new EnumMap<>(PriorityClass.class);
        for (Hold h : holds) {
            if (h.bin.equals(bin)) {
                inFlight += h.cost;
                byClass.merge(h.c, h.cost, Long::sum);
            }
        }
        if (byClass.isEmpty()) {
            return capacity > 0;
        }
        long heldBack = 0;
        for (PriorityClass k : PriorityClass.values()) {
            if (k.above(c) && !ignoreReservations) {
                heldBack += Math.max(0, dir.classSpec(k).reservedTokens(capacity) - byClass.getOrDefault(k, 0L));
            }
        }
        return inFlight + cost <= capacity - heldBack;
    }

    private static TenantDirectory randomReservations(Random random) {
        Map<PriorityClass, ClassSpec> specs = new EnumMap<>(PriorityClass.class);
        for (PriorityClass c : PriorityClass.values()) {
            ClassSpec d = ClassSpec.defaultFor(c);
            specs.put(c, new ClassSpec(random.nextInt(3) == 0 ? random.nextInt(400) : 0, random.nextInt(4) * 0.1,
                    d.queueCap(), d.queueTimeoutMillis(), d.starvationMillis(), d.canPreempt()));
        }
        return new TenantDirectory(Map.of(), Map.of(), specs, 256);
    }

    private static PriorityClass randomClass(Random random) {
        return PriorityClass.values()[random.nextInt(PriorityClass.values().length)];
    }

    /** Mostly a fraction of a bin, sometimes more than a whole one. */
    private static long cost(Random random) {
        return random.nextInt(8) == 0 ? CAPACITY + 1 + random.nextInt((int) CAPACITY) : 1 + random.nextInt(400);
    }
}
