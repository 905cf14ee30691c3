package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServiceDiscoveryOptionsTest {

    @Test
    void sglangFlagNames_parseIntoTheDiscoverySettings() {
        RouterConfig config = RouterOptions.parse("--service-discovery", "--selector", "app=sglang", "tier=gpu",
                "--service-discovery-namespace", "llm", "--service-discovery-port", "30000");
        ServiceDiscoveryConfig discovery = config.serviceDiscovery();
        assertThat(discovery.enabled()).isTrue();
        assertThat(discovery.selector()).isEqualTo(Map.of("app", "sglang", "tier", "gpu"));
        assertThat(discovery.namespace()).isEqualTo("llm");
        assertThat(discovery.port()).isEqualTo(30000);
        assertThat(discovery.bootstrapPortAnnotation()).isEqualTo("sglang.ai/bootstrap-port");
    }

    @Test
    void defaults_discoveryOffPort80() {
        ServiceDiscoveryConfig discovery = RouterOptions.parse().serviceDiscovery();
        assertThat(discovery.enabled()).isFalse();
        assertThat(discovery.port()).isEqualTo(80);
    }

    @Test
    void yamlConfigFile_usesFlagNamesAsKeys(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("router.yaml");
        Files.writeString(yaml, "service-discovery: true\nprefill-selector:\n  - app=llm\n  - role=prefill\n"
                + "decode-selector: [app=llm, role=decode]\nbootstrap-port-annotation: example.com/kv-port\n");
        ServiceDiscoveryConfig discovery = RouterOptions.parse("--config", yaml.toString()).serviceDiscovery();
        assertThat(discovery.prefillSelector()).isEqualTo(Map.of("app", "llm", "role", "prefill"));
        assertThat(discovery.decodeSelector()).isEqualTo(Map.of("app", "llm", "role", "decode"));
        assertThat(discovery.bootstrapPortAnnotation()).isEqualTo("example.com/kv-port");
    }

    @Test
    void workerUrlsWithServiceDiscovery_failWithAClearMessage() {
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--selector", "app=x",
                "--worker-urls", "http://a:1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--worker-urls and --service-discovery are mutually exclusive");
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--prefill-selector", "r=p",
                "--decode-selector", "r=d", "--prefill-urls", "http://a:1", "--decode-urls", "http://b:1"))
                .hasMessageContaining("--prefill-urls and --service-discovery are mutually exclusive");
    }

    @Test
    void badDiscoveryInput_failsNamingTheFlag() {
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery"))
                .hasMessageContaining("--service-discovery needs --selector");
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--prefill-selector", "r=p"))
                .hasMessageContaining("--prefill-selector and --decode-selector go together");
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--selector", "app"))
                .hasMessageContaining("--selector").hasMessageContaining("'app'");
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--selector", "app=a b"))
                .hasMessageContaining("--selector");
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--selector", "a=1", "a=2"))
                .hasMessageContaining("two values");
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--selector", "a=1",
                "--service-discovery-port", "0")).hasMessageContaining("--service-discovery-port").hasMessageContaining("'0'");
        assertThatThrownBy(() -> RouterOptions.parse("--service-discovery", "--selector", "a=1",
                "--service-discovery-namespace", "Bad_NS")).hasMessageContaining("--service-discovery-namespace");
        assertThatThrownBy(() -> RouterOptions.parse("--selector", "a=1"))
                .hasMessageContaining("--selector requires --service-discovery");
    }
}
