package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.PROMPT;
import static io.kvroute.router.policy.CacheAwareFixture.prompt;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.FakeLoads;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.ToIntFunction;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * 64 owners tied on matched tokens are sorted on prefill pressure while other
 * threads move the router-local in-flight counters, and over load snapshots where only some owners
 * have an estimated queue time. Every decision must end in one of the owners, never in TimSort's
 * "Comparison method violates its general contract!".
 */
class OwnerSortConcurrencyTest {
    private static final int OWNERS = 64;
    private static final int DECISIONS = 1500;

    private static CacheAwareFixture tiedOwners(List<Worker> pool) {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        for (Worker w : pool) {
            f.own(w.id(), PROMPT);
        }
        return f;
    }

    private static List<Worker> pool() {
        List<Worker> pool = new ArrayList<>();
        for (int i = 0; i < OWNERS; i++) {
            pool.add(CacheAwareFixture.w(String.format("w-%02d", i)));
        }
        return pool;
    }

    private static void assertCacheHitOnAnOwner(Decision d, Set<String> owners) {
        assertThat(owners).contains(d.worker().id());
        assertThat(d.cacheAware().label()).isEqualTo(CacheAwareDetail.CACHE_HIT);
    }

    /**
     * Real threads: four writers dispatch and complete on random owners (increment, then decrement)
     * while the test thread decides; each decision's sort reads the counters it sees.
     */
    @Test
    void tiedOwners_sortWhileOtherThreadsMoveInFlight() throws Exception {
        List<Worker> pool = pool();
        Set<String> ids = pool.stream().map(Worker::id).collect(Collectors.toSet());
        CacheAwareFixture f = tiedOwners(pool);
        AtomicIntegerArray inFlight = new AtomicIntegerArray(OWNERS);
        ToIntFunction<String> live = id -> inFlight.get(Integer.parseInt(id.substring(2)));
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            SplittableRandom rnd = new SplittableRandom(t);
            Thread writer = new Thread(() -> {
                while (!stop.get()) {
                    inFlight.incrementAndGet(rnd.nextInt(OWNERS)); // a dispatch
                    inFlight.decrementAndGet(rnd.nextInt(OWNERS)); // a completion elsewhere
                }
            }, "inflight-writer-" + t);
            writer.setDaemon(true);
            writer.start();
            writers.add(writer);
        }
        try {
            for (int i = 0; i < DECISIONS; i++) {
                Decision d = f.policy.select(new RoutingRequest(pool, live, PROMPT, null, prompt(PROMPT), null));
                assertCacheHitOnAnOwner(d, ids);
            }
        } finally {
            stop.set(true);
            for (Thread writer : writers) {
                writer.join(TimeUnit.SECONDS.toMillis(10));
            }
        }
    }

    /**
     * The worst case of the same race, deterministic: between any two reads of a counter another
     * thread has dispatched or completed, so every read returns a new number. Frozen counts make the
     * sort see one number per owner; live reads make its comparisons contradict each other.
     */
    @Test
    void tiedOwners_counterMovesOnEveryRead() {
        List<Worker> pool = pool();
        Set<String> ids = pool.stream().map(Worker::id).collect(Collectors.toSet());
        CacheAwareFixture f = tiedOwners(pool);
        SplittableRandom rnd = new SplittableRandom(99);
        ToIntFunction<String> moving = id -> rnd.nextInt(4);
        for (int i = 0; i < DECISIONS; i++) {
            assertCacheHitOnAnOwner(f.policy.select(new RoutingRequest(pool, moving, PROMPT, null, prompt(PROMPT), null)), ids);
        }
    }

    /** Every owner fresh, only some with an estimated queue time: the per-pair "both have one" is not transitive. */
    @Test
    void tiedOwners_sortOverPartlyEstimatedLoads() {
        List<Worker> pool = pool();
        Set<String> ids = pool.stream().map(Worker::id).collect(Collectors.toSet());
        CacheAwareFixture f = tiedOwners(pool);
        SplittableRandom rnd = new SplittableRandom(5);
        for (int round = 0; round < 200; round++) {
            FakeLoads loads = FakeLoads.builder();
            for (Worker w : pool) {
                boolean estimated = rnd.nextBoolean();
                loads.fresh(w.id(), rnd.nextInt(3), rnd.nextInt(6), 1000L * (1 + rnd.nextInt(6)), 1000, 1_000_000, 256,
                        estimated ? 0.5 + rnd.nextInt(8) : Double.NaN);
            }
            EngineLoadSnapshot snapshot = loads.snapshot();
            Decision d = f.policy.select(new RoutingRequest(pool, id -> 0, PROMPT, null, prompt(PROMPT), snapshot));
            assertCacheHitOnAnOwner(d, ids);
        }
    }
}
