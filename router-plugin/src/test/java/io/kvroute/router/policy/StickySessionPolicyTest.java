package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.FakeLoads;
import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StickySessionPolicyTest {
    private static final long SECOND = 1_000_000_000L;
    private static final List<Worker> THREE = pool("w-a", "w-b", "w-c");

    private final AtomicLong clock = new AtomicLong(1000 * SECOND);
    // Round robin as the delegate: a fresh pick is always visibly "the next one".
    private final StickySessionPolicy sticky =
            Policies.sticky(new RoundRobinPolicy(), "sticky", 600, clock::get);

    private Decision pick(String session, List<Worker> candidates, EngineLoadSnapshot loads) {
        return sticky.select(new RoutingRequest(candidates, id -> 0, 100, session, null, loads));
    }

    @Test
    void sameSession_staysOnItsWorker() {
        Decision first = pick("s1", THREE, null);
        assertThat(first.worker().id()).isEqualTo("w-a");
        assertThat(first.reason()).isEqualTo(DecisionReason.ROUND_ROBIN);
        for (int i = 0; i < 4; i++) {
            Decision again = pick("s1", THREE, null);
            assertThat(again.worker().id()).isEqualTo("w-a");
            assertThat(again.reason()).isEqualTo(DecisionReason.STICKY_SESSION);
        }
        assertThat(pick("s2", THREE, null).worker().id()).isEqualTo("w-b");
        assertThat(pick(null, THREE, null).worker().id()).isEqualTo("w-c"); // no key: delegate only
        assertThat(sticky.sessionCount()).isEqualTo(2);
    }

    @Test
    void idleTtl_forgetsTheWorkerOnlyAfterTheSessionWasIdleLongerThanIt() {
        pick("s1", THREE, null); // w-a
        clock.addAndGet(600 * SECOND);
        assertThat(pick("s1", THREE, null).reason()).isEqualTo(DecisionReason.STICKY_SESSION); // exactly TTL
        clock.addAndGet(599 * SECOND);
        assertThat(pick("s1", THREE, null).reason()).isEqualTo(DecisionReason.STICKY_SESSION); // use refreshed it
        clock.addAndGet(600 * SECOND + 1);
        Decision expired = pick("s1", THREE, null);
        assertThat(expired.reason()).isEqualTo(DecisionReason.ROUND_ROBIN);
        assertThat(expired.worker().id()).isEqualTo("w-b");
        assertThat(pick("s1", THREE, null).worker().id()).isEqualTo("w-b"); // rebound
    }

    @Test
    void unroutableWorker_isReplacedAndTheSessionRebinds() {
        pick("s1", THREE, null); // w-a
        Decision moved = pick("s1", pool("w-b", "w-c"), null);
        assertThat(moved.reason()).isEqualTo(DecisionReason.ROUND_ROBIN);
        assertThat(moved.worker().id()).isNotEqualTo("w-a");
        // w-a comes back, but the session now lives on its new worker.
        assertThat(pick("s1", THREE, null).worker()).isEqualTo(moved.worker());
    }

    @Test
    void workerFailingHardAdmission_isNotKept() {
        pick("s1", THREE, null); // w-a
        EngineLoadSnapshot full = FakeLoads.builder().fresh("w-a", 8, 0, 0, 1000, 1_000_000, 8, Double.NaN).snapshot();
        Decision d = pick("s1", THREE, full);
        assertThat(d.reason()).isEqualTo(DecisionReason.ROUND_ROBIN);
        assertThat(d.worker().id()).isNotEqualTo("w-a");
        EngineLoadSnapshot roomy = FakeLoads.builder().fresh(d.worker().id(), 7, 0, 0, 1000, 1_000_000, 8, Double.NaN).snapshot();
        Decision kept = pick("s1", THREE, roomy);
        assertThat(kept.reason()).isEqualTo(DecisionReason.STICKY_SESSION);
        assertThat(kept.pressureSource()).isEqualTo("estimated_prefill_queue_ms");
    }

    @Test
    void expiredSessions_areSweptAfterEnoughSelections() {
        for (int i = 0; i < 100; i++) {
            pick("old-" + i, THREE, null);
        }
        clock.addAndGet(601 * SECOND);
        for (int i = 0; i < StickySessionPolicy.SWEEP_EVERY; i++) {
            pick("live", THREE, null);
        }
        assertThat(sticky.sessionCount()).isEqualTo(1);
    }
}
