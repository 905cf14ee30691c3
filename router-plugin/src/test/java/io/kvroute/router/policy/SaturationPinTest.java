package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.load.FakeLoads;
import org.junit.jupiter.api.Test;

/**
 * The saturation pin ({@code --saturation-queue-floor 2}, {@code --worker-queue-limit 4}: when the
 * whole fleet is queueing, diverting from the prefix owner gains nothing, so the request stays on it):
 * owners w-a (deepest) and w-b hold the prompt; w-c holds nothing.
 */
class SaturationPinTest {
    private static final int LIMIT = 4;
    private static final int FLOOR = 2;

    private static CacheAwareFixture fixture(int floor) {
        return new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(LIMIT, floor))
                .own("w-a", 4096).own("w-b", 2048);
    }

    @Test
    void pin_firesWhenTheFleetIsSaturated() {
        Decision d = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 1, 5).fresh("w-b", 1, 6).fresh("w-c", 1, 4).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        assertThat(d.worker().id()).isEqualTo("w-a");
        assertThat(d.cacheAware().label()).isEqualTo(CacheAwareDetail.SATURATION_PIN);
        assertThat(d.cacheAware().gateRejections()).isEqualTo(2);
        assertThat(d.cacheAware().selectedMatchedTokens()).isEqualTo(4096);
        assertThat(d.pressureSource()).isEqualTo("estimated_prefill_queue_ms");
    }

    @Test
    void pin_yieldsWhenAnyRoutableWorkerIsFreshBelowTheFloor() {
        Decision d = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 1, 5).fresh("w-b", 1, 6).fresh("w-c", 1, FLOOR - 1).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.CAPACITY_FALLBACK_MIN_LOAD);
        assertThat(d.worker().id()).isEqualTo("w-c");
        assertThat(d.cacheAware().label()).isEqualTo(CacheAwareDetail.CACHE_WORKER_QUEUED);
    }

    @Test
    void pin_doesNotYieldToAnUnknownQueue() {
        // w-c's report is stale (and says 0 waiting): unknown is not evidence of a free worker.
        Decision stale = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 1, 5).fresh("w-b", 1, 6).stale("w-c", 0).snapshot());
        assertThat(stale.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        // w-c never reported at all.
        Decision missing = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 1, 5).fresh("w-b", 1, 6).snapshot());
        assertThat(missing.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        assertThat(missing.worker().id()).isEqualTo("w-a");
    }

    @Test
    void pin_isNotVetoedByIdleWorkersOutsideTheCandidates() {
        // w-decode (a decode peer) and w-other (another model) are idle in the load table, but the
        // lead never puts them in this request's candidates: the scan covers candidates only.
        Decision d = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-decode", 0, 0).fresh("w-other", 0, 0)
                        .fresh("w-a", 1, 5).fresh("w-b", 1, 6).fresh("w-c", 1, 4).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        // The same idle worker inside the candidates does veto it.
        Decision vetoed = fixture(FLOOR).select(pool("w-a", "w-b", "w-c", "w-other"),
                FakeLoads.builder().fresh("w-other", 0, 0)
                        .fresh("w-a", 1, 5).fresh("w-b", 1, 6).fresh("w-c", 1, 4).snapshot());
        assertThat(vetoed.reason()).isEqualTo(DecisionReason.CAPACITY_FALLBACK_MIN_LOAD);
        assertThat(vetoed.worker().id()).isEqualTo("w-other");
    }

    @Test
    void pin_skipsACapacityExhaustedOwner() {
        // w-a is less pressured but has no free running slot (8 running of 8).
        Decision d = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"), FakeLoads.builder()
                .fresh("w-a", 8, 5, 0, 1000, 1_000_000, 8, Double.NaN)
                .fresh("w-b", 1, 6).fresh("w-c", 1, 4).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        assertThat(d.worker().id()).isEqualTo("w-b");
    }

    @Test
    void pin_givesWayToTheFallbackWhenEveryOwnerIsExhausted() {
        Decision d = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"), FakeLoads.builder()
                .fresh("w-a", 8, 5, 0, 1000, 1_000_000, 8, Double.NaN)
                .fresh("w-b", 1, 6, 0, 999_000, 1_000_000, 256, Double.NaN) // + 4096 input > capacity
                .fresh("w-c", 1, 4).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.ALL_QUEUED_MIN_LOAD);
        assertThat(d.cacheAware().label()).isEqualTo(CacheAwareDetail.ALL_QUEUED);
        assertThat(d.worker().id()).isEqualTo("w-c"); // least waiting of the whole pool
    }

    @Test
    void pin_ordersByPressureOnly_soAShallowerLessPressuredOwnerWins() {
        Decision d = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 1, 9).fresh("w-b", 1, 5).fresh("w-c", 1, 4).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        assertThat(d.worker().id()).isEqualTo("w-b");
        assertThat(d.cacheAware().selectedMatchedTokens()).isEqualTo(2048);
        assertThat(d.cacheAware().bestMatchedTokens()).isEqualTo(4096);
    }

    @Test
    void pin_breaksPressureTiesByLowerWorkerId_notByMatchDepth() {
        // w-z is the deeper owner; with equal pressure the lower id w-b still wins.
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(LIMIT, FLOOR))
                .own("w-z", 4096).own("w-b", 2048);
        Decision d = f.select(pool("w-z", "w-b"),
                FakeLoads.builder().fresh("w-z", 1, 5).fresh("w-b", 1, 5).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        assertThat(d.worker().id()).isEqualTo("w-b");
    }

    @Test
    void floorUnset_fleetSaturationTierKeepsTheOwnerWithLeastUncachedWork() {
        // Same loads as the pressure-only test: without a floor the deeper, busier owner is kept.
        Decision d = fixture(0).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 1, 9).fresh("w-b", 1, 5).fresh("w-c", 1, 4).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.FLEET_SATURATION_OWNER);
        assertThat(d.worker().id()).isEqualTo("w-a");
        assertThat(d.cacheAware().label()).isEqualTo(CacheAwareDetail.ALL_QUEUED);
        // The tier needs EVERY fleet worker fresh at or over the limit: a stale one keeps it off.
        Decision off = fixture(0).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 1, 9).fresh("w-b", 1, 5).stale("w-c", 9).snapshot());
        assertThat(off.reason()).isEqualTo(DecisionReason.CAPACITY_FALLBACK_MIN_LOAD);
        assertThat(off.worker().id()).isEqualTo("w-c");
    }

    @Test
    void pin_needsAGateRejection() {
        // Everyone waits 3: under the limit (gate admits) and over the floor; the owners fail on
        // capacity only, so nothing was diverted by the gate and the pin stays out.
        Decision d = fixture(FLOOR).select(pool("w-a", "w-b", "w-c"), FakeLoads.builder()
                .fresh("w-a", 8, 3, 0, 1000, 1_000_000, 8, Double.NaN)
                .fresh("w-b", 8, 3, 0, 1000, 1_000_000, 8, Double.NaN)
                .fresh("w-c", 1, 3).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.CAPACITY_FALLBACK_MIN_LOAD);
        assertThat(d.cacheAware().gateRejections()).isZero();
        assertThat(d.cacheAware().admissionRejections()).isEqualTo(2);
        assertThat(d.worker().id()).isEqualTo("w-c");
    }
}
