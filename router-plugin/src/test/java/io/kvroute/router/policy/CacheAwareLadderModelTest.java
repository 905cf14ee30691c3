package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.PROMPT;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.FakeLoads;
import io.kvroute.router.load.WorkerLoad;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The ladder against a naive model written straight from the admission rules of SGLang's
 * experimental router ({@code experimental/sgl-router/src/policies/admission.rs}, with the saturation pin of its
 * {@code --saturation-queue-floor}), on random
 * fleets: random ownership depths, fresh / stale / missing reports, capacity edges, queue limits,
 * floors and router-local in-flight counts. The model re-sorts and re-scans everything (no early
 * exits), so an ordering or short-circuit bug in the policy shows up as a different pick or reason.
 * It shares no decision code with production: its pressure order and its pressure guard are written
 * here from those rules (only the snapshot's numbers are read through {@link EngineLoadSnapshot}).
 */
class CacheAwareLadderModelTest {
    private static final int[] DEPTHS = {0, 0, 500, 1023, 1024, 1500, 2048, 3000, 3500, 4096};

    @Test
    void ladder_agreesWithTheNaiveModelOnRandomFleets() {
        SplittableRandom rnd = new SplittableRandom(20261130);
        Map<DecisionReason, Integer> seen = new HashMap<>();
        for (int scenario = 0; scenario < 3000; scenario++) {
            int limit = rnd.nextInt(3) == 0 ? 0 : 2 + rnd.nextInt(5);
            int floor = limit == 0 || rnd.nextBoolean() ? 0 : 1 + rnd.nextInt(limit);
            CacheAwareConfig config = CacheAwareConfig.defaults().withQueue(limit, floor);
            CacheAwareFixture f = new CacheAwareFixture(config);
            int size = 1 + rnd.nextInt(12);
            List<Worker> pool = new ArrayList<>();
            Map<String, Long> matched = new HashMap<>();
            Map<String, Integer> inFlight = new HashMap<>();
            FakeLoads loads = FakeLoads.builder();
            for (int i = 0; i < size; i++) {
                String id = "w-" + (char) ('a' + rnd.nextInt(26)) + i;
                pool.add(CacheAwareFixture.w(id));
                int depth = DEPTHS[rnd.nextInt(DEPTHS.length)];
                if (depth > 0) {
                    // an equal id that is not the pool's instance half the time: lookups must go by value
                    f.own(rnd.nextBoolean() ? id : new String(id), depth);
                }
                matched.put(id, (long) depth);
                inFlight.put(id, rnd.nextInt(4));
                switch (rnd.nextInt(6)) {
                    case 0 -> { } // never reported
                    case 1 -> loads.stale(id, rnd.nextInt(9));
                    default -> {
                        int maxRunning = rnd.nextInt(4) == 0 ? 0 : 8;
                        int running = rnd.nextInt(9);
                        long maxTotal = rnd.nextInt(4) == 0 ? 0 : 20_000;
                        long total = 15_000 + rnd.nextInt(2) * 1000L; // +4096 input: 19096 fits, 20096 does not
                        double rate = rnd.nextBoolean() ? Double.NaN : 0.01 + rnd.nextInt(3);
                        loads.fresh(id, running, rnd.nextInt(9), rnd.nextInt(7) * 1000L, total, maxTotal, maxRunning, rate);
                    }
                }
            }
            if (rnd.nextInt(3) == 0) {
                // a worker that left the fleet but still owns a path in the tree: never a candidate, never the best
                f.own("w-gone", DEPTHS[1 + rnd.nextInt(DEPTHS.length - 1)]);
            }
            EngineLoadSnapshot snap = rnd.nextInt(10) == 0 ? null : loads.snapshot();
            Decision actual = f.policy.select(new RoutingRequest(pool, inFlight::get, PROMPT, null,
                    CacheAwareFixture.prompt(PROMPT), snap));
            Expected expected = model(config, pool, matched, snap, inFlight);
            assertThat(actual.worker().id()).as("scenario %d: %s", scenario, expected).isEqualTo(expected.workerId);
            assertThat(actual.reason()).as("scenario %d", scenario).isEqualTo(expected.reason);
            // the detail's match figures: the chosen worker's own depth, and the deepest over the routable pool
            assertThat(actual.cacheAware().selectedMatchedTokens()).as("scenario %d selected", scenario)
                    .isEqualTo(matched.get(actual.worker().id()));
            assertThat(actual.cacheAware().bestMatchedTokens()).as("scenario %d best", scenario)
                    .isEqualTo(matched.values().stream().mapToLong(Long::longValue).max().orElse(0));
            seen.merge(actual.reason(), 1, Integer::sum);
        }
        // The generator must reach every cache_aware exit, or the comparison proves little.
        assertThat(seen.keySet()).contains(DecisionReason.CACHE_PRIMARY, DecisionReason.CACHE_BACKUP_ADMISSION,
                DecisionReason.CACHE_PRESSURE_GUARD, DecisionReason.FLEET_SATURATION_OWNER,
                DecisionReason.SATURATION_PIN, DecisionReason.CACHE_MISS_MIN_LOAD,
                DecisionReason.CAPACITY_FALLBACK_MIN_LOAD, DecisionReason.ALL_QUEUED_MIN_LOAD);
    }

    private record Expected(String workerId, DecisionReason reason) {}

    private static Expected model(CacheAwareConfig c, List<Worker> pool, Map<String, Long> matched,
                                  EngineLoadSnapshot snap, Map<String, Integer> inFlight) {
        List<String> owners = new ArrayList<>();
        for (Worker w : pool) {
            if (matched.get(w.id()) >= c.minMatchedTokens()) {
                owners.add(w.id());
            }
        }
        Comparator<String> ownerPressure = pressure(snap, owners, inFlight);
        owners.sort(Comparator.<String>comparingLong(matched::get).reversed().thenComparing(ownerPressure)
                .thenComparing(Comparator.naturalOrder()));
        owners = new ArrayList<>(owners.subList(0, Math.min(owners.size(), c.candidateCap(pool.size()))));
        List<String> admitted = new ArrayList<>();
        List<String> gateRejected = new ArrayList<>();
        for (String id : owners) {
            if (!gate(snap, id, c.workerQueueLimit())) {
                gateRejected.add(id);
            } else if (hard(snap, id)) {
                admitted.add(id);
            }
        }
        if (!admitted.isEmpty()) {
            String primary = admitted.get(0);
            String best = primary;
            boolean allFresh = snap != null && admitted.stream().allMatch(snap::isFresh);
            for (String rival : admitted) {
                long extra = matched.get(primary) - matched.get(rival); // uncached(rival) - uncached(primary)
                if (rival.equals(primary) || extra > c.switchMarginTokens() || !allFresh) {
                    continue;
                }
                if (guardFires(snap.fresh(rival).get(), snap.fresh(best).get(), c)) {
                    best = rival;
                }
            }
            DecisionReason reason = !best.equals(primary) ? DecisionReason.CACHE_PRESSURE_GUARD
                    : primary.equals(owners.get(0)) ? DecisionReason.CACHE_PRIMARY : DecisionReason.CACHE_BACKUP_ADMISSION;
            return new Expected(best, reason);
        }
        if (!gateRejected.isEmpty()) {
            if (c.saturationQueueFloor() > 0) {
                boolean provablyFree = false;
                for (Worker w : pool) {
                    Optional<WorkerLoad> l = snap.fresh(w.id());
                    provablyFree |= l.isPresent() && l.get().numWaitingReqs() < c.saturationQueueFloor();
                }
                if (!provablyFree) {
                    Comparator<String> p = pressure(snap, gateRejected, inFlight);
                    Optional<String> pin = gateRejected.stream().filter(id -> hard(snap, id))
                            .min(p.thenComparing(Comparator.naturalOrder()));
                    if (pin.isPresent()) {
                        return new Expected(pin.get(), DecisionReason.SATURATION_PIN);
                    }
                }
            } else if (gateRejected.size() == owners.size()) {
                boolean allQueued = true;
                for (Worker w : pool) {
                    Optional<WorkerLoad> l = snap.fresh(w.id());
                    allQueued &= l.isPresent() && l.get().numWaitingReqs() >= c.workerQueueLimit();
                }
                if (allQueued) {
                    for (String id : owners) {
                        if (hard(snap, id)) {
                            return new Expected(id, DecisionReason.FLEET_SATURATION_OWNER);
                        }
                    }
                }
            }
        }
        List<String> open = new ArrayList<>();
        for (Worker w : pool) {
            if (gate(snap, w.id(), c.workerQueueLimit())) {
                open.add(w.id());
            }
        }
        DecisionReason reason = owners.isEmpty() ? DecisionReason.CACHE_MISS_MIN_LOAD
                : DecisionReason.CAPACITY_FALLBACK_MIN_LOAD;
        if (open.isEmpty()) {
            for (Worker w : pool) {
                open.add(w.id());
            }
            reason = DecisionReason.ALL_QUEUED_MIN_LOAD;
        }
        Comparator<String> p = pressure(snap, open, inFlight);
        String best = open.get(0);
        for (String id : open) {
            if (p.compare(id, best) < 0) {
                best = id;
            }
        }
        return new Expected(best, reason);
    }

    /**
     * {@code compare_prefill_pressure}, each key chosen for the whole set: router-local
     * in-flight unless every worker is fresh; else estimated ms (when all have one), waiting uncached
     * tokens (when all report the extension), waiting, running, then in-flight.
     */
    private static Comparator<String> pressure(EngineLoadSnapshot snap, List<String> ids, Map<String, Integer> inFlight) {
        Comparator<String> local = Comparator.comparingInt(inFlight::get);
        if (snap == null || ids.isEmpty() || !ids.stream().allMatch(id -> snap.fresh(id).isPresent())) {
            return local;
        }
        Map<String, WorkerLoad> l = new HashMap<>();
        ids.forEach(id -> l.put(id, snap.fresh(id).get()));
        boolean allMs = l.values().stream().allMatch(x -> x.estimatedPrefillQueueMs().isPresent());
        boolean allExt = l.values().stream().allMatch(WorkerLoad::hasExtension);
        Comparator<String> c = (a, b) -> 0;
        if (allMs) {
            c = c.thenComparingDouble(id -> l.get(id).estimatedPrefillQueueMs().getAsDouble());
        }
        if (allExt) {
            c = c.thenComparingLong(id -> l.get(id).numWaitingUncachedTokens());
        }
        return c.thenComparingInt(id -> l.get(id).numWaitingReqs()).thenComparingInt(id -> l.get(id).numRunningReqs())
                .thenComparing(local);
    }

    /** Pressure guard: best is materially more pressured, gap over abs AND over rel x rival. */
    private static boolean guardFires(WorkerLoad rival, WorkerLoad best, CacheAwareConfig c) {
        if (rival.estimatedPrefillQueueMs().isPresent() && best.estimatedPrefillQueueMs().isPresent()) {
            double r = rival.estimatedPrefillQueueMs().getAsDouble();
            double b = best.estimatedPrefillQueueMs().getAsDouble();
            return b - r > c.pressureAbsThresholdMs() && b > c.pressureRelThreshold() * r;
        }
        if (rival.hasExtension() && best.hasExtension()) {
            long r = rival.numWaitingUncachedTokens();
            long b = best.numWaitingUncachedTokens();
            return b - r > c.pressureAbsThresholdTokens() && b > c.pressureRelThreshold() * r;
        }
        return false;
    }

    private static boolean gate(EngineLoadSnapshot snap, String id, int limit) {
        if (limit == 0 || snap == null) {
            return true;
        }
        Optional<WorkerLoad> l = snap.fresh(id);
        return l.isEmpty() || l.get().numWaitingReqs() < limit;
    }

    private static boolean hard(EngineLoadSnapshot snap, String id) {
        if (snap == null || snap.fresh(id).isEmpty()) {
            return true;
        }
        WorkerLoad l = snap.fresh(id).get();
        boolean slot = l.maxRunningRequests() == 0 || l.numRunningReqs() + 1 <= l.maxRunningRequests();
        boolean room = l.maxTotalNumTokens() == 0 || l.numTotalTokens() + PROMPT <= l.maxTotalNumTokens();
        return slot && room;
    }
}
