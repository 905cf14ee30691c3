package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LoadEndpointsTest {

    @Test
    void wildcardHosts_becomeTheWorkersHost_othersAreKept() {
        assertThat(LoadEndpoints.connectable("tcp://0.0.0.0:5560", "10.0.0.7")).isEqualTo("tcp://10.0.0.7:5560");
        assertThat(LoadEndpoints.connectable("tcp://*:5561", "gpu-3.local")).isEqualTo("tcp://gpu-3.local:5561");
        assertThat(LoadEndpoints.connectable("tcp://[::]:5560", "fd00::7")).isEqualTo("tcp://[fd00::7]:5560");
        assertThat(LoadEndpoints.connectable("tcp://10.1.1.1:5560", "10.0.0.7")).isEqualTo("tcp://10.1.1.1:5560");
        assertThat(LoadEndpoints.connectable("inproc://load", "10.0.0.7")).isEqualTo("inproc://load");
    }

    @Test
    void config_rejectsAPollTimeoutAbove50MsAndNamesTheValue() {
        assertThatThrownBy(() -> LoadPlaneConfig.defaults().withPollTimeout(Duration.ofMillis(51)))
                .hasMessageContaining("poll timeout").hasMessageContaining("PT0.051S");
        assertThatThrownBy(() -> LoadPlaneConfig.defaults().withFreshnessWindow(Duration.ZERO))
                .hasMessageContaining("freshness window");
    }
}
