package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.RouterOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@code --prefill-policy} defaults to {@code --policy}: the help text, the policy the router really builds and the
 * validation of the cache-aware flags all agree.
 */
class PrefillPolicyDefaultTest {

    private static final String[] PD = {"--prefill-urls", "http://127.0.0.1:1", "--decode-urls", "http://127.0.0.1:2"};

    private static String[] pd(String... more) {
        String[] args = new String[PD.length + more.length];
        System.arraycopy(PD, 0, args, 0, PD.length);
        System.arraycopy(more, 0, args, PD.length, more.length);
        return args;
    }

    @Test
    void unsetPrefillPolicy_isThePolicy_sameInstance() {
        KvRouter router = KvRouter.create(RouterOptions.parse(pd()));
        assertThat(router.prefillPolicy().name()).isEqualTo("round_robin");
        assertThat(router.prefillPolicy()).isSameAs(router.policy());
        KvRouter powerOfTwo = KvRouter.create(RouterOptions.parse(pd("--policy", "power_of_two")));
        assertThat(powerOfTwo.prefillPolicy()).isSameAs(powerOfTwo.policy());
        assertThat(powerOfTwo.prefillPolicy().name()).isEqualTo("power_of_two");
    }

    @Test
    void explicitPrefillPolicy_isUsed() {
        KvRouter router = KvRouter.create(RouterOptions.parse(pd("--prefill-policy", "cache_aware")));
        assertThat(router.prefillPolicy().name()).isEqualTo("cache_aware");
        assertThat(router.policy().name()).isEqualTo("round_robin");
    }

    @Test
    void queueFlags_validateAgainstThePrefillPolicyThatRuns() {
        // Unset prefill policy = round_robin: a queue limit would never apply, so it is refused and both flags named.
        assertThatThrownBy(() -> RouterOptions.parse(pd("--worker-queue-limit", "4")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--worker-queue-limit requires --policy cache_aware or --prefill-policy cache_aware");
        // The prefill policy is cache_aware behind sticky: the gate really runs there, so it is accepted.
        assertThat(RouterOptions.parse(pd("--prefill-policy", "sticky", "--sticky-fallback-policy", "cache_aware",
                "--worker-queue-limit", "4", "--saturation-queue-floor", "2")).cacheAware().saturationQueueFloor()).isEqualTo(2);
        // --policy cache_aware is the prefill policy when --prefill-policy is unset.
        assertThat(RouterOptions.parse(pd("--policy", "cache_aware", "--worker-queue-limit", "4")).cacheAware().workerQueueLimit())
                .isEqualTo(4);
    }

    @Test
    void help_saysTheDefaultIsThePolicy() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RouterOptions.newCommandLine(new RouterOptions()).usage(new PrintStream(out, true, StandardCharsets.UTF_8));
        String help = out.toString(StandardCharsets.UTF_8).replaceAll("\\s+", " ");
        assertThat(help).contains("Policy choosing the PD prefill worker (default: --policy)");
        assertThat(help).contains("also the PD prefill policy unless --prefill-policy is set");
        assertThat(help).contains("--retry-max-attempts=<maxAttempts> Attempts per request, the first included; "
                + "1 disables retries (default 3).");
    }
}
