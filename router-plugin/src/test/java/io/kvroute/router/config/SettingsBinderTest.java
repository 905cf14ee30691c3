package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SettingsBinderTest {

    @Test
    void defaults_areTheDeclaredOnes() {
        RetrySettings retry = SettingsBinder.defaults(RetrySettings.class);
        assertThat(retry).isEqualTo(new RetrySettings(3, 50, 30000, 1.5, 0.2));
        assertThat(BreakerSettings.DEFAULTS.disabled()).isFalse();
        assertThat(HealthSettings.DEFAULTS.intervalMillis()).isEqualTo(10_000);
    }

    @Test
    void givenValues_overrideDefaults_andALaterFlagWins() {
        RetrySettings retry = SettingsBinder.parse(RetrySettings.class,
                "--retry-max-attempts=5", "--retry-jitter", "0", "--retry-max-attempts=7");
        assertThat(retry.maxAttempts()).isEqualTo(7);
        assertThat(retry.jitter()).isZero();
        assertThat(retry.initialBackoffMs()).isEqualTo(50);
    }

    @Test
    void aBareBooleanFlag_meansTrue_andAnyOtherWordIsRefused() {
        assertThat(SettingsBinder.parse(BreakerSettings.class, "--disable-circuit-breaker").disabled()).isTrue();
        assertThat(SettingsBinder.parse(BreakerSettings.class, "--disable-circuit-breaker=false").disabled()).isFalse();
        assertThatThrownBy(() -> SettingsBinder.parse(BreakerSettings.class, "--disable-circuit-breaker=yes"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--disable-circuit-breaker must be true or false (got 'yes')");
    }

    @Test
    void boundsAndNumberFormats_areReportedWithTheFlagAndTheValue() {
        assertThatThrownBy(() -> SettingsBinder.parse(RetrySettings.class, "--retry-max-attempts=0"))
                .hasMessage("--retry-max-attempts must be at least 1 (got '0')");
        assertThatThrownBy(() -> SettingsBinder.parse(RetrySettings.class, "--retry-jitter=1.5"))
                .hasMessage("--retry-jitter must be between 0 and 1 (got '1.5')");
        assertThatThrownBy(() -> SettingsBinder.parse(RetrySettings.class, "--retry-max-attempts=many"))
                .hasMessage("--retry-max-attempts must be a whole number (got 'many')");
        assertThatThrownBy(() -> SettingsBinder.parse(HealthSettings.class, "--health-check-interval-secs=0"))
                .hasMessage("--health-check-interval-secs must be a positive number (got '0')");
        assertThatThrownBy(() -> SettingsBinder.parse(HealthSettings.class, "--health-check-timeout-secs=NaN"))
                .hasMessage("--health-check-timeout-secs must be a finite number (got 'NaN')");
        assertThatThrownBy(() -> SettingsBinder.parse(HealthSettings.class, "--health-check-timeout-secs=Infinity"))
                .hasMessage("--health-check-timeout-secs must be a finite number (got 'Infinity')");
    }

    @Test
    void aRuleOverSeveralSettings_isCheckedByTheRecord() {
        assertThatThrownBy(() -> SettingsBinder.parse(RetrySettings.class,
                "--retry-initial-backoff-ms=500", "--retry-max-backoff-ms=100"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--retry-max-backoff-ms must be >= --retry-initial-backoff-ms (500) (got '100')");
    }

    @Test
    void theRouterCommandLine_reachesTheRecords() {
        RouterConfig config = RouterOptions.parse("--worker-urls=http://a:1", "--retry-max-attempts=1",
                "--cb-timeout-secs=2.5", "--health-failure-threshold=4");
        assertThat(config.retry().maxAttempts()).isEqualTo(1);
        assertThat(config.breaker().openNanos()).isEqualTo(2_500_000_000L);
        assertThat(config.health().failureThreshold()).isEqualTo(4);
        assertThatThrownBy(() -> RouterOptions.parse("--worker-urls=http://a:1", "--cb-failure-threshold=-1"))
                .hasMessage("--cb-failure-threshold must be at least 1 (got '-1')");
    }

    @Test
    void cacheAwareDefaults_areThePolicysOwnDefaults() {
        assertThat(CacheAwareSettings.DEFAULTS.toPolicyConfig())
                .isEqualTo(io.kvroute.router.policy.CacheAwareConfig.defaults());
    }

    @Test
    void firstChangedFlag_namesTheFirstComponentThatDiffers() {
        assertThat(SettingsBinder.firstChangedFlag(CacheAwareSettings.DEFAULTS, CacheAwareSettings.DEFAULTS)).isNull();
        CacheAwareSettings tuned = SettingsBinder.parse(CacheAwareSettings.class, "--cache-sample-stride=64",
                "--disable-pressure-guard");
        assertThat(SettingsBinder.firstChangedFlag(tuned, CacheAwareSettings.DEFAULTS)).isEqualTo("--disable-pressure-guard");
    }
}
