package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.policy.RoutingPolicy;
import org.junit.jupiter.api.Test;

/**
 * The policies the composition root builds from the flags: one cache-aware instance however many
 * roles name it (so the main and the PD prefill policy share one prefix index), and session wrappers
 * that are not stacked on a policy that already pins sessions.
 */
class RouterPoliciesTest {

    private static final String[] PD = {"--prefill-urls", "http://127.0.0.1:1", "--decode-urls", "http://127.0.0.1:2"};

    private static RouterPolicies build(String... flags) {
        String[] args = new String[PD.length + flags.length];
        System.arraycopy(PD, 0, args, 0, PD.length);
        System.arraycopy(flags, 0, args, PD.length, flags.length);
        return RouterPolicies.build(RouterOptions.parse(args), () -> 0L);
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
