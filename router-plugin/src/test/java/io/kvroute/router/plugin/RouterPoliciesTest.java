package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.DecisionReason;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The policies the composition root builds from the flags: one cache-aware instance however many
 * roles name it (so the main and the PD prefill policy share one prefix index), and session wrappers
 * that are not stacked on a policy that already pins sessions.
 */
class RouterPoliciesTest {

    private static final String[] PD = {"--prefill-urls", "http://127.0.0.1:1", "--decode-urls", "http://127.0.0.1:2"};

    private static RouterPolicies build(String... flags) {
        return build(() -> 0L, flags);
    }

    private static RouterPolicies build(java.util.function.LongSupplier nanoClock, String... flags) {
        String[] args = new String[PD.length + flags.length];
        System.arraycopy(PD, 0, args, 0, PD.length);
        System.arraycopy(flags, 0, args, PD.length, flags.length);
        return RouterPolicies.build(RouterOptions.parse(args), nanoClock);
    }

    /**
     * The prefix index ticks on the router's clock: a dispatch the router just made stands in for an empty
     * exact answer during the in-flight grace, and stops doing so once the router's clock (not the wall
     * clock) has moved past it.
     */
    @Test
    void cacheAwareIndex_agesItsClaimsOnTheRoutersClock() {
        AtomicLong nanos = new AtomicLong(5_000_000_000L);
        CacheAwarePolicy policy = build(nanos::get, "--policy", "cache_aware").cacheAware().get(0);
        policy.useExactIndex((candidates, ids) -> Map.of("w-a", 0L, "w-b", 0L), false, 10_000);
        List<Worker> pool = List.of(worker("w-a"), worker("w-b"));
        int[] prompt = IntStream.range(0, 4_096).toArray();
        Decision first = policy.select(new RoutingRequest(pool, id -> 0, prompt.length, null, prompt));
        policy.recordDispatch(first);

        nanos.addAndGet(9_000_000_000L); // 9 s on the router's clock: still within the 10 s grace
        Decision within = policy.select(new RoutingRequest(pool, id -> 0, prompt.length, null, prompt));
        assertThat(within.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
        assertThat(within.worker().id()).isEqualTo(first.worker().id());

        nanos.addAndGet(2_000_000_000L); // 11 s: the claim is older than the grace, the exact answer decides
        Decision after = policy.select(new RoutingRequest(pool, id -> 0, prompt.length, null, prompt));
        assertThat(after.reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
    }

    private static Worker worker(String id) {
        return new Worker(id, "http://" + id + ":1", WorkerRole.REGULAR, "m", null, List.of());
    }

    @Test
    void cacheAware_namedByPolicyAndByAStickyPrefillFallback_isOneInstance() {
        RouterPolicies policies = build("--policy", "cache_aware", "--prefill-policy", "sticky",
                "--sticky-fallback-policy", "cache_aware");
        assertThat(policies.cacheAware()).hasSize(1);
        assertThat(policies.main()).isSameAs(policies.cacheAware().get(0));
        assertThat(policies.prefill().name()).isEqualTo("sticky");
        assertThat(policies.prefill()).isNotSameAs(policies.main());
    }

    @Test
    void unsetPrefillPolicy_sharesTheMainPolicyAndItsSessionWrapper() {
        RouterPolicies policies = build("--policy", "cache_aware");
        assertThat(policies.prefill()).isSameAs(policies.main());
        assertThat(policies.prefillSession()).isSameAs(policies.session());
        assertThat(policies.session()).isNotSameAs(policies.main());
        assertThat(policies.session().name()).isEqualTo("cache_aware");
    }

    @Test
    void stickyPolicies_areTheirOwnSessionPolicies() {
        RouterPolicies policies = build("--policy", "sticky", "--prefill-policy", "sticky");
        assertThat(policies.session()).isSameAs(policies.main());
        assertThat(policies.prefillSession()).isSameAs(policies.prefill());
        assertThat(policies.cacheAware()).isEmpty();
    }

    @Test
    void noCacheAwarePolicy_listsNone() {
        RouterPolicies policies = build("--policy", "round_robin", "--prefill-policy", "power_of_two");
        assertThat(policies.cacheAware()).isEmpty();
        RoutingPolicy decode = policies.decode();
        assertThat(decode).isNotNull();
    }
}
