package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ObservabilityOptionsTest {

    @Test
    void defaults_areOff() {
        ObservabilityConfig o = RouterOptions.parse("--worker-urls", "http://127.0.0.1:1").observability();
        assertThat(o.accessLog()).isNull();
        assertThat(o.tracingEnabled()).isFalse();
        assertThat(o.traceSamplingRatio()).isEqualTo(1.0);
    }

    @Test
    void flags_reachTheConfig() {
        ObservabilityConfig o = RouterOptions.parse("--worker-urls", "http://127.0.0.1:1", "--access-log", "stdout",
                "--otlp-traces-endpoint", "http://collector:4318/v1/traces", "--trace-sampling-ratio", "0.25").observability();
        assertThat(o.accessLog()).isEqualTo("stdout");
        assertThat(o.otlpTracesEndpoint()).isEqualTo("http://collector:4318/v1/traces");
        assertThat(o.traceSamplingRatio()).isEqualTo(0.25);
        assertThat(o.tracingEnabled()).isTrue();
    }

    @Test
    void samplingRatio_isBetweenZeroAndOne() {
        for (String bad : new String[] {"-0.1", "1.5", "NaN"}) {
            assertThatThrownBy(() -> RouterOptions.parse("--worker-urls", "http://127.0.0.1:1",
                    "--trace-sampling-ratio", bad))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("--trace-sampling-ratio")
                    .hasMessageContaining(bad);
        }
        assertThat(RouterOptions.parse("--worker-urls", "http://127.0.0.1:1", "--trace-sampling-ratio", "0")
                .observability().traceSamplingRatio()).isZero();
    }

    @Test
    void otlpEndpoint_mustBeAnHttpUrl() {
        assertThatThrownBy(() -> RouterOptions.parse("--worker-urls", "http://127.0.0.1:1",
                "--otlp-traces-endpoint", "collector:4318"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--otlp-traces-endpoint");
    }
}
