package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import static io.kvroute.router.load.LoadFixtures.snapshot;
import static io.kvroute.router.load.LoadFixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

/**
 * The {@link Comparator} contract for {@link PrefillPressure} and {@link DecodePressure} over random
 * sets that mix what upstream compares only "when both have it" (an estimate, the extension, a
 * known capacity): sgn symmetry, transitivity and consistency of ties, checked on every triple.
 * And the in-flight counts are frozen: a counter that moves between reads must not move the order.
 */
class PressureComparatorContractTest {
    private static final long S = 1_000_000_000L;
    private static final int SETS = 120;
    private static final int WORKERS = 9;

    /** A random fresh worker: extension or not, with or without an estimate, capacity known or not. */
    private static WorkerState randomWorker(String id, SplittableRandom rnd) {
        int running = rnd.nextInt(4);
        int waiting = rnd.nextInt(4);
        long tokens = rnd.nextInt(4) * 100L;
        long max = rnd.nextBoolean() ? 0 : 1000;
        LoadReport report;
        double tput = Double.NaN;
        if (rnd.nextInt(3) == 0) {
            report = new LoadReport(0, running, waiting, tokens, max, 0, false, 0, 0, 0, 0, 0);
        } else {
            long uncached = rnd.nextInt(4) * 1000L;
            report = new LoadReport(0, running, waiting, tokens, max, 0, true, uncached, tokens, 64, 0, 0);
            if (rnd.nextBoolean()) {
                tput = 0.5 + rnd.nextInt(4); // an estimate; NaN with uncached > 0 = none
            }
        }
        return worker(id, 1, new RankSample(report, 9 * S, tput));
    }

    /** Plain checks (no assertion object per triple: there are 729 triples per set). */
    private static void assertContract(Comparator<String> c, List<String> ids) {
        for (String a : ids) {
            for (String b : ids) {
                int ab = c.compare(a, b);
                if (Integer.signum(ab) != -Integer.signum(c.compare(b, a))) {
                    throw new AssertionError("sgn(" + a + "," + b + ") != -sgn(" + b + "," + a + ")");
                }
                for (String x : ids) {
                    int bx = c.compare(b, x);
                    int ax = c.compare(a, x);
                    if (ab <= 0 && bx <= 0 && ax > 0) {
                        throw new AssertionError("not transitive: " + a + " <= " + b + " <= " + x + " but " + a + " > " + x);
                    }
                    if (ab == 0 && Integer.signum(ax) != Integer.signum(bx)) {
                        throw new AssertionError(a + " ~ " + b + " but they compare differently with " + x);
                    }
                }
            }
        }
    }

    @Test
    void prefillAndDecodePressure_areTotalOrders_overMixedSets() {
        SplittableRandom rnd = new SplittableRandom(14);
        for (int set = 0; set < SETS; set++) {
            List<String> ids = new ArrayList<>();
            WorkerState[] workers = new WorkerState[WORKERS];
            int[] inFlight = new int[WORKERS];
            for (int i = 0; i < WORKERS; i++) {
                ids.add("w" + i);
                workers[i] = randomWorker("w" + i, rnd);
                inFlight[i] = rnd.nextInt(3);
            }
            ToIntFunction<String> local = id -> inFlight[Integer.parseInt(id.substring(1))];
            EngineLoadSnapshot snap = snapshot(10 * S, new DispatchLog(), workers);
            assertContract(PrefillPressure.of(snap, ids, local), ids);
            assertContract(DecodePressure.of(snap, ids, local), ids);
            assertContract(PrefillPressure.routerLocal(ids, local), ids);
        }
    }

    /**
     * The interleaving: the sort reads worker a's in-flight count, another thread completes a request on
     * a, the sort reads a again. Here every read sees a new count (the worst case of that race); the
     * comparator must answer from the counts frozen when it was built.
     */
    @Test
    void inFlightCounts_areReadOncePerWorker_soAMovingCounterCannotReorder() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            ids.add("w" + i);
        }
        java.util.Map<String, Integer> reads = new java.util.HashMap<>();
        SplittableRandom rnd = new SplittableRandom(8);
        ToIntFunction<String> moving = id -> {
            reads.merge(id, 1, Integer::sum);
            return rnd.nextInt(3);
        };
        for (int round = 0; round < 200; round++) {
            reads.clear();
            PrefillPressure p = PrefillPressure.routerLocal(ids, moving);
            List<String> shuffled = new ArrayList<>(ids);
            Collections.shuffle(shuffled, new java.util.Random(round));
            assertThatCode(() -> shuffled.sort(p.thenComparing(Comparator.naturalOrder()))).doesNotThrowAnyException();
            assertThat(reads.values()).as("each counter read once").containsOnly(1);
            assertContract(p, ids.subList(0, 12));
        }
        WorkerState[] stale = new WorkerState[64];
        for (int i = 0; i < 64; i++) {
            stale[i] = worker("w" + i, 1); // no sample: router-local for the whole set
        }
        reads.clear();
        DecodePressure d = DecodePressure.of(snapshot(10 * S, new DispatchLog(), stale), ids, moving);
        List<String> shuffled = new ArrayList<>(ids);
        shuffled.sort(d.thenComparing(Comparator.naturalOrder()));
        assertThat(reads.values()).as("each counter read once").containsOnly(1);
    }
}
