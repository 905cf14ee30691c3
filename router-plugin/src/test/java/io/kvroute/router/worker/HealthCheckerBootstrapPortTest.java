package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** Where a prefill worker's KV bootstrap port is read from its {@code /server_info}. */
class HealthCheckerBootstrapPortTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static Integer port(String json) throws Exception {
        return HealthChecker.bootstrapPort(JSON.readTree(json));
    }

    @Test
    void kvrouteMock_topLevelBootstrapPort() throws Exception {
        assertThat(port("{\"bootstrap_port\":41000}")).isEqualTo(41000);
    }

    @Test
    void sglangPrefill_serverArgsDisaggregationBootstrapPort() throws Exception {
        // SGLang's /server_info is its server arguments: srt/server_args.py disaggregation_bootstrap_port
        assertThat(port("{\"disaggregation_mode\":\"prefill\",\"disaggregation_bootstrap_port\":8998}")).isEqualTo(8998);
    }

    @Test
    void notAPort_isUnknown() throws Exception {
        assertThat(port("{\"bootstrap_port\":null}")).isNull();
        assertThat(port("{\"bootstrap_port\":\"41000\"}")).isNull();
        assertThat(port("{\"bootstrap_port\":70000}")).isNull();
        assertThat(port("{\"bootstrap_port\":0}")).isNull();
        // a decode engine's server args carry the same default; it is not a prefill bootstrap server
        assertThat(port("{\"disaggregation_mode\":\"decode\",\"disaggregation_bootstrap_port\":8998}")).isNull();
        assertThat(port("{}")).isNull();
    }
}
