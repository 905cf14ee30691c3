package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * {@link FairQueue} against a naive model (linear scans over every tenant) on random operation
 * sequences with fixed seeds: after every operation the picks (with and without locality, with and
 * without tenants passed over), sizes and the counters of active tenants agree.
 */
class FairQueueModelTest {

    private static final String[] TENANTS = {"a", "b", "c", "d", "e", "f"};

    /** The specification, written as plainly as possible. */
    static final class NaiveModel {
        final double slack;
        final Map<String, Double> counter = new HashMap<>();
        final Map<String, Double> weight = new HashMap<>();
        final Map<String, Integer> inFlight = new HashMap<>();
        final Map<String, ArrayDeque<Integer>> queue = new HashMap<>();
        double floor;

        NaiveModel(double slack) {
            this.slack = slack;
            for (String t : TENANTS) {
                counter.put(t, 0.0);
                weight.put(t, 1.0);
                inFlight.put(t, 0);
                queue.put(t, new ArrayDeque<>());
            }
        }

        boolean active(String t) {
            return inFlight.get(t) > 0 || !queue.get(t).isEmpty();
        }

        double minActive() {
            double min = Double.POSITIVE_INFINITY;
            for (String t : TENANTS) {
                if (active(t)) {
                    min = Math.min(min, counter.get(t));
                }
            }
            return min == Double.POSITIVE_INFINITY ? floor : min;
        }

        void lift(String t) {
            counter.put(t, Math.max(counter.get(t), minActive()));
        }

        void becameIdleMaybe(String t, boolean wasActive) {
            if (wasActive && !active(t) && noneActive()) {
                floor = Math.max(floor, counter.get(t));
            }
        }

        boolean noneActive() {
            for (String t : TENANTS) {
                if (active(t)) {
                    return false;
                }
            }
            return true;
        }

        void add(String t, double w, int item) {
            weight.put(t, w);
            if (!active(t)) {
                lift(t);
            }
            queue.get(t).addLast(item);
        }

        void admitDirect(String t, double w) {
            weight.put(t, w);
            if (!active(t)) {
                lift(t);
            }
            inFlight.merge(t, 1, Integer::sum);
        }

        List<String> backloggedSorted() {
            List<String> b = new ArrayList<>();
            for (String t : TENANTS) {
                if (!queue.get(t).isEmpty()) {
                    b.add(t);
                }
            }
            b.sort(Comparator.<String>comparingDouble(counter::get).thenComparing(t -> t));
            return b;
        }

        /** The pick among the backlogged tenants not in {@code passed}, as if those had nothing queued. */
        String pick(ToLongFunction<Integer> cached, Set<String> passed) {
            List<String> b = backloggedSorted();
            b.removeAll(passed);
            if (b.isEmpty()) {
                return null;
            }
            String best = b.get(0);
            if (cached == null || slack == 0) {
                return best;
            }
            double min = counter.get(best);
            long bestCached = cached.applyAsLong(queue.get(best).peekFirst());
            for (int i = 1; i < b.size() && i < FairQueue.LOCALITY_SCAN; i++) {
                String t = b.get(i);
                if (counter.get(t) > min + slack) {
                    break;
                }
                long c = cached.applyAsLong(queue.get(t).peekFirst());
                if (c > bestCached) {
                    best = t;
                    bestCached = c;
                }
            }
            return best;
        }

        void admitHead(String t) {
            queue.get(t).pollFirst();
            inFlight.merge(t, 1, Integer::sum);
        }

        void finished(String t) {
            inFlight.merge(t, -1, Integer::sum);
            becameIdleMaybe(t, true);
        }

        boolean remove(String t, int item) {
            boolean removed = queue.get(t).remove(item);
            if (removed) {
                becameIdleMaybe(t, true);
            }
            return removed;
        }

        void charge(String t, double service) {
            counter.put(t, Math.max(0, counter.get(t) + service / weight.get(t)));
        }

        int size() {
            return queue.values().stream().mapToInt(ArrayDeque::size).sum();
        }
    }

    @Test
    void randomOperations_matchTheNaiveModel_withoutSlack() {
        for (long seed = 1; seed <= 40; seed++) {
            run(seed, 0);
        }
    }

    @Test
    void randomOperations_matchTheNaiveModel_withLocalitySlack() {
        for (long seed = 100; seed <= 140; seed++) {
            run(seed, 300);
        }
    }

    private static void run(long seed, double slack) {
        SplittableRandom random = new SplittableRandom(seed);
        FairQueue<Integer> queue = new FairQueue<>(slack);
        NaiveModel model = new NaiveModel(slack);
        Map<Integer, Long> cachedByItem = new HashMap<>();
        int nextItem = 0;
        for (int op = 0; op < 2_000; op++) {
            String t = TENANTS[random.nextInt(TENANTS.length)];
            double w = new double[] {1, 1, 2, 4}[random.nextInt(4)];
            int kind = random.nextInt(100);
            String at = "seed " + seed + " op " + op;
            if (kind < 30) {
                int item = nextItem++;
                cachedByItem.put(item, (long) random.nextInt(4) * 100);
                queue.add(t, w, item);
                model.add(t, w, item);
            } else if (kind < 38) {
                queue.admitDirect(t, w);
                model.admitDirect(t, w);
            } else if (kind < 60) {
                ToLongFunction<Integer> cached = random.nextBoolean() ? cachedByItem::get : null;
                Set<String> passed = new HashSet<>();
                if (random.nextBoolean()) { // the gate passing over heads that wait for their prefix holder
                    for (String each : TENANTS) {
                        if (random.nextInt(3) == 0) {
                            passed.add(each);
                        }
                    }
                }
                FairQueue.Pick<Integer> pick = passed.isEmpty() && random.nextBoolean() ? queue.pick(cached)
                        : queue.pick(cached, passed);
                String expected = model.pick(cached, passed);
                assertThat(pick == null ? null : pick.tenant()).as(at).isEqualTo(expected);
                if (pick != null) {
                    assertThat(pick.item()).as(at).isEqualTo(model.queue.get(expected).peekFirst());
                    queue.admitHead(pick.tenant(), pick.item());
                    model.admitHead(expected);
                    double service = random.nextInt(500);
                    queue.charge(expected, service);
                    model.charge(expected, service);
                }
            } else if (kind < 75) {
                if (model.inFlight.get(t) > 0) {
                    queue.finished(t);
                    model.finished(t);
                }
            } else if (kind < 85) {
                double service = random.nextInt(200);
                if (model.active(t)) { // output charged while a request streams
                    queue.charge(t, service);
                    model.charge(t, service);
                }
            } else {
                ArrayDeque<Integer> q = model.queue.get(t);
                if (!q.isEmpty()) {
                    Integer victim = new ArrayList<>(q).get(random.nextInt(q.size()));
                    assertThat(queue.remove(t, victim)).as(at).isTrue();
                    model.remove(t, victim);
                } else {
                    assertThat(queue.remove(t, -1)).as(at).isFalse();
                }
            }
            assertThat(queue.size()).as(at).isEqualTo(model.size());
            for (String each : TENANTS) {
                if (model.active(each)) {
                    assertThat(queue.counter(each)).as(at + " counter of " + each).isEqualTo(model.counter.get(each));
                }
            }
        }
    }

    @Test
    void newlyActiveTenant_isLiftedToTheMinimumActiveCounter_soIdleTimeBanksNoCredit() {
        FairQueue<String> queue = new FairQueue<>(0);
        queue.add("a", 1, "a1");
        queue.admitHead("a", "a1");
        queue.charge("a", 1_000);
        queue.add("a", 1, "a2");
        queue.add("b", 1, "b1"); // b never ran: without the lift it would win the next 1,000 tokens
        assertThat(queue.counter("b")).isEqualTo(1_000);
    }

    @Test
    void aPassedTenant_keepsItsPlace_andIsPickedFirstOnceNoLongerPassed() {
        FairQueue<String> queue = new FairQueue<>(0);
        queue.add("a", 1, "a1");
        queue.add("b", 1, "b1");
        queue.add("b", 1, "b2");
        Set<String> passed = Set.of("a");
        FairQueue.Pick<String> pick = queue.pick(null, passed);
        assertThat(pick.item()).isEqualTo("b1");
        queue.admitHead("b", "b1");
        queue.charge("b", 100);
        assertThat(queue.pick(null, passed).item()).as("b's next, a still passed").isEqualTo("b2");
        assertThat(queue.pick(null).item()).as("a was served nothing: first again").isEqualTo("a1");
        assertThat(queue.pick(null, Set.of("a", "b"))).as("everyone passed").isNull();
    }

    @Test
    void weights_divideTheCharge() {
        FairQueue<String> queue = new FairQueue<>(0);
        queue.add("light", 1, "x");
        queue.add("heavy", 4, "y");
        queue.charge("light", 400);
        queue.charge("heavy", 400);
        assertThat(queue.counter("light")).isEqualTo(400);
        assertThat(queue.counter("heavy")).isEqualTo(100);
        assertThat(queue.pick(null).tenant()).isEqualTo("heavy");
    }

    @Test
    void idleTenantsAtOrBelowTheFloor_arePruned_soTheStructureStaysBounded() {
        FairQueue<Integer> queue = new FairQueue<>(0);
        queue.add("busy", 1, -1);
        queue.admitHead("busy", -1);
        queue.charge("busy", 10);
        for (int i = 0; i < 5_000; i++) {
            String t = "t" + i;
            queue.admitDirect(t, 1);
            queue.finished(t);
        }
        assertThat(queue.trackedTenants()).isLessThan(2_000);
    }
}
