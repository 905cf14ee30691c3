package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.load.FakeLoads;
import org.junit.jupiter.api.Test;

/**
 * Stale = saturated for workers whose load is scraped from /metrics (llm-d's rule), while a stale
 * pushed LoadStat keeps failing open. Owner w-a holds the prompt deepest; w-b and w-c hold nothing.
 */
class StaleScrapeSaturationTest {
    private static final int LIMIT = 4;

    private static CacheAwareFixture fixture(int floor) {
        return new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(LIMIT, floor)).own("w-a", 4096);
    }

    @Test
    void queueGate_divertsFromAStaleScrapedOwner() {
        Decision d = fixture(0).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().staleScraped("w-a", 0).fresh("w-b", 1, 0).fresh("w-c", 1, 1).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.CAPACITY_FALLBACK_MIN_LOAD);
        assertThat(d.worker().id()).isNotEqualTo("w-a");
        assertThat(d.cacheAware().gateRejections()).isEqualTo(1);
    }

    @Test
    void queueGate_keepsAFreshScrapedOwnerBelowTheLimit() {
        Decision d = fixture(0).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().freshScraped("w-a", 1, LIMIT - 1).fresh("w-b", 1, 0).fresh("w-c", 1, 0).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
        assertThat(d.worker().id()).isEqualTo("w-a");
    }

    @Test
    void queueGate_divertsFromAFreshScrapedOwnerAtTheLimit() {
        Decision d = fixture(0).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().freshScraped("w-a", 1, LIMIT).fresh("w-b", 1, 0).fresh("w-c", 1, 0).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.CAPACITY_FALLBACK_MIN_LOAD);
    }

    @Test
    void staleLoadStatOwner_stillFailsOpen() {
        Decision d = fixture(0).select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().stale("w-a", 0).fresh("w-b", 1, 0).fresh("w-c", 1, 0).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
        assertThat(d.worker().id()).isEqualTo("w-a");
    }

    @Test
    void pin_doesNotYieldToAStaleScrapedWorkerThatLastSaidIdle() {
        Decision d = new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(LIMIT, 2)).own("w-a", 4096)
                .own("w-b", 2048).select(pool("w-a", "w-b", "w-c"),
                        FakeLoads.builder().fresh("w-a", 1, 5).fresh("w-b", 1, 6).staleScraped("w-c", 0).snapshot());
        assertThat(d.reason()).isEqualTo(DecisionReason.SATURATION_PIN);
        assertThat(d.worker().id()).isEqualTo("w-a");
    }

    @Test
    void fleetSaturationTier_countsAStaleScrapedWorkerAsOverTheLimit() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(LIMIT, 0)).own("w-a", 4096);
        Decision scraped = f.select(pool("w-a", "w-b"),
                FakeLoads.builder().fresh("w-a", 1, LIMIT + 1).staleScraped("w-b", 0).snapshot());
        assertThat(scraped.reason()).isEqualTo(DecisionReason.FLEET_SATURATION_OWNER);
        Decision loadStat = f.select(pool("w-a", "w-b"),
                FakeLoads.builder().fresh("w-a", 1, LIMIT + 1).stale("w-b", 0).snapshot());
        assertThat(loadStat.reason()).isNotEqualTo(DecisionReason.FLEET_SATURATION_OWNER);
    }
}
