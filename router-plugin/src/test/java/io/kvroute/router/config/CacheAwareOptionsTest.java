package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.policy.CacheAwareConfig;
import org.junit.jupiter.api.Test;

/** The cache_aware and session-affinity flags: defaults, the validation rules of
 * SGLang's experimental router ({@code experimental/sgl-router/src/config/cli.rs}) and their order:
 * numeric checks before policy checks. */
class CacheAwareOptionsTest {

    @Test
    void defaults_matchTheDocumentedValues() {
        RouterConfig c = RouterOptions.parse();
        assertThat(c.cacheAware().minMatchedTokens()).isEqualTo(1024);
        assertThat(c.cacheAware().candidateMaxWorkers()).isEqualTo(32);
        assertThat(c.cacheAware().candidateMinWorkers()).isEqualTo(8);
        assertThat(c.cacheAware().candidateRatio()).isEqualTo(0.05);
        assertThat(c.cacheAware().switchMarginTokens()).isEqualTo(1024);
        assertThat(c.cacheAware().pressureAbsThresholdTokens()).isEqualTo(1024);
        assertThat(c.cacheAware().pressureRelThreshold()).isEqualTo(1.5);
        assertThat(c.cacheAware().workerQueueLimit()).isNull();
        assertThat(c.cacheAware().saturationQueueFloor()).isNull();
        assertThat(c.cacheAware().keyMode()).isEqualTo("auto");
        assertThat(c.cacheAware().sampleStride()).isEqualTo(512);
        assertThat(c.session().idHeader()).isEqualTo("x-session-id");
        assertThat(c.session().idleSecs()).isEqualTo(600);
        assertThat(c.session().fallbackPolicy()).isEqualTo("power_of_two");
        assertThat(c.cacheAwareConfig()).isEqualTo(CacheAwareConfig.defaults());
    }

    @Test
    void cacheFlags_reachThePolicyConfig() {
        RouterConfig c = RouterOptions.parse("--policy", "cache_aware", "--worker-queue-limit", "8",
                "--saturation-queue-floor", "2", "--cache-key-mode", "chars", "--disable-pressure-guard");
        CacheAwareConfig cache = c.cacheAwareConfig();
        assertThat(cache.workerQueueLimit()).isEqualTo(8);
        assertThat(cache.saturationQueueFloor()).isEqualTo(2);
        assertThat(cache.keyMode()).isEqualTo("chars");
        assertThat(cache.disablePressureGuard()).isTrue();
    }

    @Test
    void workerQueueLimit_mustBeAtLeastOne() {
        assertThatThrownBy(() -> RouterOptions.parse("--policy", "cache_aware", "--worker-queue-limit", "0"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--worker-queue-limit must be at least 1");
    }

    @Test
    void saturationFloor_requiresTheQueueGate_isAtLeastOne_andStaysAtOrBelowTheLimit() {
        assertThatThrownBy(() -> RouterOptions.parse("--policy", "cache_aware", "--saturation-queue-floor", "2"))
                .hasMessageContaining("--saturation-queue-floor requires --worker-queue-limit")
                .hasMessageContaining("there is no diversion to cancel without it");
        assertThatThrownBy(() -> RouterOptions.parse("--policy", "cache_aware", "--worker-queue-limit", "4",
                "--saturation-queue-floor", "0"))
                .hasMessageContaining("--saturation-queue-floor must be at least 1");
        assertThatThrownBy(() -> RouterOptions.parse("--policy", "cache_aware", "--worker-queue-limit", "4",
                "--saturation-queue-floor", "5"))
                .hasMessageContaining("--saturation-queue-floor (5) must be at most --worker-queue-limit (4)");
        assertThat(RouterOptions.parse("--policy", "cache_aware", "--worker-queue-limit", "4",
                "--saturation-queue-floor", "4").cacheAware().saturationQueueFloor()).isEqualTo(4);
    }

    @Test
    void tunedCacheFlags_requireTheCacheAwarePolicy() {
        assertThatThrownBy(() -> RouterOptions.parse("--worker-queue-limit", "4"))
                .hasMessageContaining("--worker-queue-limit requires --policy cache_aware")
                .hasMessageContaining("round_robin");
        assertThatThrownBy(() -> RouterOptions.parse("--policy", "power_of_two", "--cache-switch-margin-tokens", "1"))
                .hasMessageContaining("--cache-switch-margin-tokens requires --policy cache_aware");
        assertThatThrownBy(() -> RouterOptions.parse("--disable-pressure-guard"))
                .hasMessageContaining("--disable-pressure-guard requires --policy cache_aware");
        // A PD prefill policy of cache_aware counts.
        assertThat(RouterOptions.parse("--prefill-urls", "http://p:1", "--decode-urls", "http://d:1",
                "--prefill-policy", "cache_aware", "--worker-queue-limit", "4").cacheAware().workerQueueLimit()).isEqualTo(4);
        // So does cache_aware behind --policy sticky.
        assertThat(RouterOptions.parse("--policy", "sticky", "--sticky-fallback-policy", "cache_aware",
                "--worker-queue-limit", "4").cacheAware().workerQueueLimit()).isEqualTo(4);
    }

    @Test
    void numericChecks_comeBeforePolicyChecks() {
        // Wrong under any policy: the value is reported, not the missing --policy cache_aware.
        assertThatThrownBy(() -> RouterOptions.parse("--worker-queue-limit", "0"))
                .hasMessageContaining("--worker-queue-limit must be at least 1");
        assertThatThrownBy(() -> RouterOptions.parse("--saturation-queue-floor", "3"))
                .hasMessageContaining("requires --worker-queue-limit");
        assertThatThrownBy(() -> RouterOptions.parse("--worker-queue-limit", "2", "--saturation-queue-floor", "3"))
                .hasMessageContaining("must be at most --worker-queue-limit (2)");
        assertThatThrownBy(() -> RouterOptions.parse("--cache-candidate-ratio", "2"))
                .hasMessageContaining("--cache-candidate-ratio").hasMessageContaining("'2'");
    }

    @Test
    void sessionFlags_areValidated() {
        assertThatThrownBy(() -> RouterOptions.parse("--session-idle-secs", "0")).hasMessageContaining("--session-idle-secs");
        assertThatThrownBy(() -> RouterOptions.parse("--sticky-fallback-policy", "sticky"))
                .hasMessageContaining("--sticky-fallback-policy");
        assertThatThrownBy(() -> RouterOptions.parse("--cache-key-mode", "bytes")).hasMessageContaining("--cache-key-mode");
        assertThat(RouterOptions.parse("--policy", "sticky", "--sticky-fallback-policy", "cache_aware").policy())
                .isEqualTo("sticky");
    }
}
