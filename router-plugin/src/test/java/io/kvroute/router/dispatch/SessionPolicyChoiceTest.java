package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.policy.Policies;
import io.kvroute.router.policy.RoutingPolicy;
import org.junit.jupiter.api.Test;

/** A request with a session key is picked by the session-sticky policy of its kind; one without, by the plain one. */
class SessionPolicyChoiceTest {

    private final RoutingPolicy roundRobin = Policies.create("round_robin", 2);
    private final RoutingPolicy sticky = Policies.sticky(roundRobin, "round_robin", 60, () -> 0L);
    private final RoutingPolicy decode = Policies.create("round_robin", 2);

    @Test
    void plain_sessionKeySelectsTheStickyPolicy() {
        PlainRouting routing = new PlainRouting(roundRobin, sticky);
        assertThat(routing.forSession("user-7")).isSameAs(sticky);
        assertThat(routing.forSession(null)).isSameAs(roundRobin);
    }

    @Test
    void pd_sessionKeySelectsTheStickyPrefillPolicy() {
        PdRouting routing = new PdRouting(roundRobin, sticky, decode, () -> 1L);
        assertThat(routing.prefillFor("user-7")).isSameAs(sticky);
        assertThat(routing.prefillFor(null)).isSameAs(roundRobin);
    }
}
