package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.PROMPT;
import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.FakeLoads;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheAwarePolicyTest {

    private static CacheAwareFixture defaults() {
        return new CacheAwareFixture(CacheAwareConfig.defaults());
    }

    // ------------------------------------------------------------ candidates

    @Test
    void candidate_needsTheMinimumMatchedTokens() {
        Decision below = defaults().own("w-a", 1023).select(pool("w-a", "w-b"), null);
        assertThat(below.reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
        assertThat(below.cacheAware().label()).isEqualTo(CacheAwareDetail.CACHE_MISS);
        assertThat(below.cacheAware().bestMatchedTokens()).isEqualTo(1023);

        Decision at = defaults().own("w-b", 1024).select(pool("w-a", "w-b"), null);
        assertThat(at.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
        assertThat(at.worker().id()).isEqualTo("w-b");
        assertThat(at.cacheAware().label()).isEqualTo(CacheAwareDetail.CACHE_HIT);
        assertThat(at.cacheAware().selectedMatchedTokens()).isEqualTo(1024);
    }

    @Test
    void candidate_minMatchRatioAppliesToo() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withMinMatch(1024, 0.5)).own("w-a", 2000);
        assertThat(f.select(pool("w-a", "w-b"), null).reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
        f.own("w-b", 2048); // exactly half of the 4096-token prompt
        assertThat(f.select(pool("w-a", "w-b"), null).worker().id()).isEqualTo("w-b");
    }

    @Test
    void candidateCap_isMinOfPoolMaxAndProportionalFloor() {
        CacheAwareConfig c = CacheAwareConfig.defaults(); // max 32, min 8, ratio 0.05
        assertThat(c.candidateCap(1)).isEqualTo(1);
        assertThat(c.candidateCap(8)).isEqualTo(8);
        assertThat(c.candidateCap(100)).isEqualTo(8);   // ceil(5) < 8
        assertThat(c.candidateCap(161)).isEqualTo(9);   // ceil(8.05)
        assertThat(c.candidateCap(200)).isEqualTo(10);
        assertThat(c.candidateCap(640)).isEqualTo(32);
        assertThat(c.candidateCap(1000)).isEqualTo(32);  // ceil(50) capped at 32
    }

    @Test
    void candidateCap_dropsTheShallowestOwnersBeforeAdmission() {
        // 9 owners in a pool of 9: cap 8. The 8 deepest are full; the 9th (shallowest) is free but
        // beyond the cap, so the request falls back instead of hitting it.
        CacheAwareFixture f = defaults();
        List<String> ids = new ArrayList<>();
        FakeLoads loads = FakeLoads.builder();
        for (int i = 0; i < 9; i++) {
            String id = "w-" + i;
            ids.add(id);
            f.own(id, 4096 - i * 10);
            loads = i < 8 ? loads.fresh(id, 8, 0, 0, 1000, 1_000_000, 8, Double.NaN) : loads.fresh(id, 0, 0);
        }
        Decision d = f.select(pool(ids.toArray(String[]::new)), loads.snapshot());
        assertThat(d.cacheAware().admissionRejections()).isEqualTo(8);
        assertThat(d.reason()).isEqualTo(DecisionReason.CAPACITY_FALLBACK_MIN_LOAD);
        assertThat(d.worker().id()).isEqualTo("w-8"); // the min-load fallback finds it anyway
    }

    // ------------------------------------------------------------ queue gate

    @Test
    void queueGate_failsOpenWithoutAFreshSample() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(4, 0)).own("w-a", 4096);
        Decision stale = f.select(pool("w-a", "w-b"), FakeLoads.builder().stale("w-a", 100).fresh("w-b", 0, 0).snapshot());
        assertThat(stale.worker().id()).isEqualTo("w-a");
        assertThat(stale.cacheAware().gateRejections()).isZero();
        assertThat(stale.cacheAware().gateBlind()).isFalse(); // w-b is fresh

        Decision noPlane = f.select(pool("w-a", "w-b"), null);
        assertThat(noPlane.worker().id()).isEqualTo("w-a");
        assertThat(noPlane.cacheAware().gateBlind()).isTrue();
        assertThat(f.policy.gateBlindDecisions()).isEqualTo(1);
    }

    @Test
    void queueGate_rejectsAtTheLimitAndAdmitsBelowIt() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(4, 0))
                .own("w-a", 4096).own("w-b", 3500);
        Decision atLimit = f.select(pool("w-a", "w-b"), FakeLoads.builder().fresh("w-a", 1, 4).fresh("w-b", 1, 3).snapshot());
        assertThat(atLimit.worker().id()).isEqualTo("w-b");
        assertThat(atLimit.reason()).isEqualTo(DecisionReason.CACHE_BACKUP_ADMISSION);
        assertThat(atLimit.cacheAware().gateRejections()).isEqualTo(1);
        assertThat(atLimit.cacheAware().admissionRejections()).isZero();

        Decision below = f.select(pool("w-a", "w-b"), FakeLoads.builder().fresh("w-a", 1, 3).fresh("w-b", 1, 3).snapshot());
        assertThat(below.worker().id()).isEqualTo("w-a");
        assertThat(below.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
    }

    @Test
    void noCacheWinner_samplesGateAdmittedWorkersOnly() {
        // No owner. w-a waits 9 and w-b 5 (both >= limit 4) with no uncached tokens queued; w-c
        // waits 1 with 5000 uncached tokens, so on pressure alone w-a/w-b would win. Min-load
        // samples the gate-admitted {w-c} only; with nobody open it uses the whole pool.
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withQueue(4, 0));
        Decision open = f.select(pool("w-a", "w-b", "w-c"),
                FakeLoads.builder().fresh("w-a", 0, 9).fresh("w-b", 0, 5)
                        .fresh("w-c", 0, 1, 5000, 1000, 1_000_000, 256, Double.NaN).snapshot());
        assertThat(open.worker().id()).isEqualTo("w-c");
        assertThat(open.reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
        Decision everyone = f.select(pool("w-a", "w-b"),
                FakeLoads.builder().fresh("w-a", 0, 9).fresh("w-b", 0, 5).snapshot());
        assertThat(everyone.worker().id()).isEqualTo("w-b");
        assertThat(everyone.reason()).isEqualTo(DecisionReason.ALL_QUEUED_MIN_LOAD);
        assertThat(everyone.cacheAware().label()).isEqualTo(CacheAwareDetail.ALL_QUEUED);
    }

    // ------------------------------------------------------------ hard admission

    @Test
    void hardAdmission_runningSlotEdge() {
        EngineLoadSnapshot loads = FakeLoads.builder()
                .fresh("w-last-slot", 7, 0, 0, 0, 1_000_000, 8, Double.NaN)
                .fresh("w-full", 8, 0, 0, 0, 1_000_000, 8, Double.NaN)
                .fresh("w-unknown", 500, 0, 0, 0, 1_000_000, 0, Double.NaN).snapshot();
        assertThat(CacheAdmission.hardAdmits(loads, "w-last-slot", 10)).isTrue();
        assertThat(CacheAdmission.hardAdmits(loads, "w-full", 10)).isFalse();
        assertThat(CacheAdmission.hardAdmits(loads, "w-unknown", 10)).isTrue();
        assertThat(CacheAdmission.hardAdmits(loads, "w-unsampled", 10)).isTrue();
        assertThat(CacheAdmission.hardAdmits(null, "w-full", 10)).isTrue();
    }

    @Test
    void hardAdmission_tokenCapacityEdge() {
        EngineLoadSnapshot loads = FakeLoads.builder()
                .fresh("w-a", 0, 0, 0, 6000, 10_000, 8, Double.NaN)
                .fresh("w-unknown", 0, 0, 0, 9_999_999, 0, 8, Double.NaN).snapshot();
        assertThat(CacheAdmission.hardAdmits(loads, "w-a", 4000)).isTrue();  // 6000 + 4000 == 10000
        assertThat(CacheAdmission.hardAdmits(loads, "w-a", 4001)).isFalse();
        assertThat(CacheAdmission.hardAdmits(loads, "w-unknown", 4001)).isTrue();
    }

    // ------------------------------------------------------------ tournament

    /** w-a owns the whole prompt; w-b owns {@code bDepth}; waiting uncached tokens as given. */
    private static Decision duel(CacheAwareConfig config, int bDepth, long aQueueTokens, long bQueueTokens) {
        return new CacheAwareFixture(config).own("w-a", PROMPT).own("w-b", bDepth).select(pool("w-a", "w-b"),
                FakeLoads.builder()
                        .fresh("w-a", 1, 1, aQueueTokens, 1000, 1_000_000, 64, Double.NaN)
                        .fresh("w-b", 1, 1, bQueueTokens, 1000, 1_000_000, 64, Double.NaN).snapshot());
    }

    @Test
    void tournament_rivalWithinTheMarginWinsWhenMateriallyLessPressured() {
        Decision d = duel(CacheAwareConfig.defaults(), PROMPT - 1024, 5000, 1000);
        assertThat(d.worker().id()).isEqualTo("w-b");
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRESSURE_GUARD);
        assertThat(d.cacheAware().pressureGuardOverrides()).isEqualTo(1);
        assertThat(d.pressureSource()).isEqualTo("native_queue_tokens");
    }

    @Test
    void tournament_rivalJustOutsideTheMarginLoses() {
        Decision d = duel(CacheAwareConfig.defaults(), PROMPT - 1025, 5000, 1000);
        assertThat(d.worker().id()).isEqualTo("w-a");
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
        assertThat(d.cacheAware().pressureGuardOverrides()).isZero();
    }

    @Test
    void tournament_pressureGapMustExceedBothThresholds() {
        // Absolute gap exactly 1024: not greater than the threshold.
        assertThat(duel(CacheAwareConfig.defaults(), PROMPT - 100, 2024, 1000).worker().id()).isEqualTo("w-a");
        // Absolute gap 2000 but only 1.25x: not materially more pressured.
        assertThat(duel(CacheAwareConfig.defaults(), PROMPT - 100, 10_000, 8000).worker().id()).isEqualTo("w-a");
        // Both: 2025 > 1024 and 3025 > 1.5 x 1000.
        assertThat(duel(CacheAwareConfig.defaults(), PROMPT - 100, 3025, 1000).worker().id()).isEqualTo("w-b");
    }

    @Test
    void tournament_disabledGuardKeepsTheLeastUncachedOwner() {
        Decision d = duel(CacheAwareConfig.defaults().withoutPressureGuard(), PROMPT - 100, 50_000, 0);
        assertThat(d.worker().id()).isEqualTo("w-a");
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
    }

    @Test
    void tournament_comparesEstimatedMillisWhenBothHaveThem() {
        // 1 token/us: 5000 tokens = 5 ms vs 1 ms; token gap 4000 would switch, the ms gap (4 ms) is
        // under the 100 ms threshold, so the owner with less uncached work stays.
        Decision d = new CacheAwareFixture(CacheAwareConfig.defaults()).own("w-a", PROMPT).own("w-b", PROMPT - 100)
                .select(pool("w-a", "w-b"), FakeLoads.builder()
                        .fresh("w-a", 1, 1, 5000, 1000, 1_000_000, 64, 1.0)
                        .fresh("w-b", 1, 1, 1000, 1000, 1_000_000, 64, 1.0).snapshot());
        assertThat(d.pressureSource()).isEqualTo("estimated_prefill_queue_ms");
        assertThat(d.worker().id()).isEqualTo("w-a");
        // At 0.01 token/us the same queues are 500 ms vs 100 ms: switch.
        Decision slow = new CacheAwareFixture(CacheAwareConfig.defaults()).own("w-a", PROMPT).own("w-b", PROMPT - 100)
                .select(pool("w-a", "w-b"), FakeLoads.builder()
                        .fresh("w-a", 1, 1, 5000, 1000, 1_000_000, 64, 0.01)
                        .fresh("w-b", 1, 1, 1000, 1000, 1_000_000, 64, 0.01).snapshot());
        assertThat(slow.worker().id()).isEqualTo("w-b");
    }

    /**
     * The guard's loop runs here (a load plane, both owners admitted, the rival within the margin) but
     * w-b's report is stale, so the set is compared on router-local in-flight, which is no evidence of
     * engine pressure: no override, however lopsided the counts. The control shows the same fixture
     * does reach an override once both reports are fresh.
     */
    @Test
    void tournament_routerLocalOnlyNeverOverrides() {
        CacheAwareFixture f = defaults().own("w-a", PROMPT).own("w-b", PROMPT - 10);
        Map<String, Integer> inFlight = Map.of("w-a", 500, "w-b", 0);
        EngineLoadSnapshot oneStale = FakeLoads.builder().fresh("w-a", 1, 1, 50_000, 1000, 1_000_000, 64, Double.NaN)
                .stale("w-b", 0).snapshot();
        Decision d = f.policy.select(new RoutingRequest(pool("w-a", "w-b"), inFlight::get, PROMPT, null,
                CacheAwareFixture.prompt(PROMPT), oneStale));
        assertThat(d.worker().id()).isEqualTo("w-a");
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
        assertThat(d.pressureSource()).isEqualTo("router_local");
        assertThat(d.cacheAware().pressureGuardOverrides()).isZero();

        EngineLoadSnapshot bothFresh = FakeLoads.builder().fresh("w-a", 1, 1, 50_000, 1000, 1_000_000, 64, Double.NaN)
                .fresh("w-b", 1, 1, 0, 1000, 1_000_000, 64, Double.NaN).snapshot();
        Decision control = f.policy.select(new RoutingRequest(pool("w-a", "w-b"), inFlight::get, PROMPT, null,
                CacheAwareFixture.prompt(PROMPT), bothFresh));
        assertThat(control.worker().id()).isEqualTo("w-b");
        assertThat(control.reason()).isEqualTo(DecisionReason.CACHE_PRESSURE_GUARD);

        // No load plane at all: the deepest owner, on router-local data.
        Decision none = f.policy.select(new RoutingRequest(pool("w-a", "w-b"), inFlight::get, PROMPT, null,
                CacheAwareFixture.prompt(PROMPT), null));
        assertThat(none.worker().id()).isEqualTo("w-a");
        assertThat(none.pressureSource()).isEqualTo("router_local");
    }

    // ------------------------------------------------------------ keys and inserts

    @Test
    void recordDispatch_makesTheChosenWorkerTheOwnerOfTheNextIdenticalRequest() {
        CacheAwareFixture f = defaults();
        List<Worker> workers = pool("w-a", "w-b", "w-c");
        Decision first = f.select(workers, null);
        assertThat(first.cacheAware().label()).isEqualTo(CacheAwareDetail.CACHE_MISS);
        assertThat(first.cacheAware().prefixMatch()).isNotNull();
        f.policy.recordDispatch(first);
        for (int i = 0; i < 5; i++) {
            Decision again = f.select(workers, null);
            assertThat(again.worker()).isEqualTo(first.worker());
            assertThat(again.cacheAware().selectedMatchedTokens()).isEqualTo(PROMPT);
        }
    }

    @Test
    void charModes_convertMatchedCharactersToTokensAtFourPerToken() {
        String text = "x".repeat(4096) + "y".repeat(4096);
        for (String mode : List.of(CacheAwareConfig.MODE_CHARS, CacheAwareConfig.MODE_SAMPLED)) {
            CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withKeyMode(mode));
            RoutingRequest r = new RoutingRequest(pool("w-a", "w-b"), id -> 0, 2048, null, null, null, text);
            f.policy.recordDispatch(new Decision(CacheAwareFixture.w("w-b"), DecisionReason.CACHE_MISS_MIN_LOAD, "none",
                    f.policy.select(r).cacheAware()));
            Decision d = f.policy.select(r);
            assertThat(d.worker().id()).as(mode).isEqualTo("w-b");
            // chars: 8192 / 4; sampled (stride 512): 16 samples -> min(15 * 512 + 1, 8192) / 4.
            assertThat(d.cacheAware().selectedMatchedTokens()).as(mode)
                    .isEqualTo(mode.equals("chars") ? 2048 : (15 * 512 + 1) / 4);
        }
    }

    @Test
    void autoMode_tokenKeysNeverMatchCharacterKeys() {
        CacheAwareFixture f = defaults();
        int[] ids = new int[2048];
        java.util.Arrays.fill(ids, 'x'); // token ids that equal the code points of the text
        RoutingRequest tokens = new RoutingRequest(pool("w-a", "w-b"), id -> 0, 2048, null, ids, null);
        f.policy.recordDispatch(new Decision(CacheAwareFixture.w("w-a"), DecisionReason.CACHE_MISS_MIN_LOAD, "none",
                f.policy.select(tokens).cacheAware()));
        RoutingRequest text = new RoutingRequest(pool("w-a", "w-b"), id -> 0, 2048, null, null, null, "x".repeat(2_000_000));
        assertThat(f.policy.select(text).cacheAware().bestMatchedTokens()).isZero();
        assertThat(f.policy.select(tokens).cacheAware().selectedMatchedTokens()).isEqualTo(2048);
    }

    @Test
    void sampledKeysOfLatin1Text_keepTheirByteForm_andEachKeyModeHasItsOwnTree() {
        CacheAwareConfig config = CacheAwareConfig.defaults();
        RoutingRequest latin1 = new RoutingRequest(pool("w-a"), id -> 0, 10, null, null, null, "é".repeat(4096));
        RoutingRequest cjk = new RoutingRequest(pool("w-a"), id -> 0, 10, null, null, null, "中".repeat(4096));
        assertThat(CacheKey.of(latin1, config).key.toString()).contains("bytes=true");
        assertThat(CacheKey.of(cjk, config).key.toString()).contains("bytes=false");
        for (String mode : new String[] {"tokens", "chars", "sampled"}) {
            assertThat(new CacheAwareFixture(config.withKeyMode(mode)).policy.prefixIndexes()).containsOnlyKeys(mode);
        }
    }

    @Test
    void removeWorker_forgetsTheWorkerInEveryKeyModesTree() {
        CacheAwareFixture f = defaults();
        RoutingRequest tokens = new RoutingRequest(pool("w-a"), id -> 0, 2048, null, CacheAwareFixture.prompt(2048), null);
        RoutingRequest text = new RoutingRequest(pool("w-a"), id -> 0, 2048, null, null, null, "y".repeat(8192));
        for (RoutingRequest r : List.of(tokens, text)) {
            f.policy.recordDispatch(new Decision(CacheAwareFixture.w("w-a"), DecisionReason.CACHE_MISS_MIN_LOAD,
                    "none", f.policy.select(r).cacheAware()));
        }
        assertThat(f.policy.prefixIndexes().values()).allSatisfy(
                index -> assertThat(index.stats().ownedElements("w-a")).isPositive());
        f.policy.removeWorker("w-a");
        assertThat(f.policy.prefixIndexes().values()).allSatisfy(index -> {
            assertThat(index.stats().ownedElements("w-a")).isZero();
            assertThat(index.stats().nodes()).isZero();
        });
    }

    @Test
    void requestWithoutKey_isACacheMissWithoutAMatch() {
        Decision d = defaults().policy.select(new RoutingRequest(pool("w-a"), id -> 0, 10, null));
        assertThat(d.cacheAware().label()).isEqualTo(CacheAwareDetail.CACHE_MISS);
        assertThat(d.cacheAware().prefixMatch()).isNull();
    }

    @Test
    void policies_buildsCacheAwareAndStickyByName() {
        RoutingPolicy cache = Policies.create("cache_aware", 2);
        assertThat(cache.name()).isEqualTo("cache_aware");
        assertThat(cache.needsTokens()).isTrue();
        assertThat(((CacheAwarePolicy) cache).prefixIndexes()).containsOnlyKeys("tokens", "sampled"); // auto
        RoutingPolicy sticky = Policies.create("sticky", 2);
        assertThat(sticky.name()).isEqualTo("sticky");
        assertThat(((StickySessionPolicy) sticky).delegate().name()).isEqualTo("power_of_two");
        assertThat(Policies.sticky(cache, "cache_aware", 600, System::nanoTime).needsTokens()).isTrue();
    }
}
