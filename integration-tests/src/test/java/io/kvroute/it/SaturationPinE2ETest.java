package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.mock.BundledTokenizer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Under saturation, diverting requests away from their prefix owners only turns a burst into cache
 * misses. With --saturation-queue-floor the router pins such requests to the least-pressured owner
 * instead, while the gate alone keeps the owner only through its own saturation tier, which needs
 * every worker at or over the limit at once (limit 4 here); the floor (1) only needs no worker to be
 * provably idle. On a real fleet the strict condition rarely holds: a few workers briefly under the
 * limit keep the diversion firing (the rationale of SGLang's {@code --saturation-queue-floor},
 * {@code experimental/sgl-router/src/policies/admission.rs}).
 *
 * <p>What is asserted is that the floor reaches the ladder through real load reports: with it the burst
 * pins requests to their owners, without it nothing is pinned. The router runs the approximate index,
 * whose ladder this is (the exact index's answers depend on when engine events land). The floor's
 * semantics (pin unless some worker is provably idle, against the gate's all-at-the-limit tier) are checked
 * by {@code CacheAwareLadderModelTest} against a naive model: an injected bug that tests the floor at the
 * queue limit fails that test, and did not fail this one.
 *
 * <p>Compared across the two runs, hit rates and off-owner diversions are printed, not asserted: in a closed
 * burst on this 2-core box they overlap and depend on run order (the gate's run is always first). Hit
 * rates: gate 0.50-0.76 vs floor 0.60-0.83 (six runs of two batches of 48, one CI failure); 0.49-0.64 vs
 * 0.57-0.77 (192 requests in batches of 24, seven runs, 2026-12-05). Diversions: 13-22 vs 6-9 over eight
 * runs on 2026-11-30, 17-24 vs 8-20 over seven runs on 2026-12-05, 23 vs 24 in a fresh-clone CI run that
 * failed on a "fewer diversions" assertion, and 29 vs 13 with the injected bug above. The hit-rate effect is
 * measured open-loop by the harness's saturation scenario (docs/benchmarks.md).
 */
class SaturationPinE2ETest {

    private static long lastPins;
    private static long lastDiversions;

    private static double burstHitRate(List<String> extraRouterArgs) throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<String> workerArgs = new ArrayList<>(CacheAwareE2ETest.workerArgs());
        workerArgs.addAll(List.of("--prefill-ms-per-1k", "80", "--decode-ms-per-step", "4"));
        List<String> routerArgs = new ArrayList<>(List.of("--policy", "cache_aware", "--tokenizer-path", tokenizer,
                "--worker-queue-limit", "4", "--load-freshness-secs", "5", "--health-check-interval-secs", "0.2",
                "--cache-index", "approximate"));
        routerArgs.addAll(extraRouterArgs);
        try (TestFleet fleet = TestFleet.start(4, workerArgs, routerArgs); Http http = new Http()) {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
                var snapshot = fleet.router.router().loads().snapshot();
                return fleet.router.router().workers().fleet().all().stream().allMatch(w -> snapshot.isFresh(w.id()));
            });
            CacheAwareE2ETest.hitRate(fleet, http, 24, 1); // warm: each tenant gets an owner
            double rate = CacheAwareE2ETest.hitRate(fleet, http, 192, 24); // a burst far above what 4 workers drain
            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            scrape.lines().filter(l -> l.startsWith("kvroute_cache_aware_decisions_total") || l.startsWith("kvroute_policy_decisions_total"))
                    .forEach(System.out::println);
            lastPins = counter(scrape, "kvroute_cache_aware_decisions_total{decision=\"saturation_pin\"");
            // Requests sent off their owners to a less loaded worker while owners existed.
            lastDiversions = counter(scrape, "kvroute_policy_decisions_total{policy=\"cache_aware\",reason=\"capacity_fallback_min_load\"")
                    + counter(scrape, "kvroute_policy_decisions_total{policy=\"cache_aware\",reason=\"all_queued_min_load\"");
            return rate;
        }
    }

    private static long counter(String scrape, String prefix) {
        return scrape.lines().filter(l -> l.startsWith(prefix))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void saturationFloor_pinsBurstRequestsToTheirOwners_theGateAloneNever() throws Exception {
        double gateOnly = burstHitRate(List.of());
        long gateDiversions = lastDiversions;
        assertThat(lastPins).as("no pins without a floor").isZero();
        double gateAndFloor = burstHitRate(List.of("--saturation-queue-floor", "1"));
        long floorDiversions = lastDiversions;
        assertThat(lastPins).as("saturation pins during the burst").isPositive();
        System.out.printf("burst hit rate: gate %.3f, gate+floor %.3f; diversions %d vs %d; pins %d%n", gateOnly, gateAndFloor,
                gateDiversions, floorDiversions, lastPins);
    }
}
