package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigFileTest {

    @Test
    void load_readsYamlKeysAsFlagNames_andYamlNullMeansDefault(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("kvroute.yaml");
        Files.writeString(yaml, "policy: random\nworker-urls: [http://a:1, http://b:2]\n"
                + "retry-max-attempts: 1\nworker-queue-limit: null\nmin-load-choices:\n");
        RouterConfig config = ConfigFile.load(yaml);
        assertThat(config.policy()).isEqualTo("random");
        assertThat(config.workerUrls()).containsExactly("http://a:1", "http://b:2");
        assertThat(config.retry().maxAttempts()).isEqualTo(1);
        assertThat(config.cacheAware().workerQueueLimit()).isNull();
        assertThat(config.minLoadChoices()).isEqualTo(2);
    }

    @Test
    void fromProperties_prefixedKeysOverrideTheYamlFile_blankMeansUnset(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("kvroute.yaml");
        Files.writeString(yaml, "policy: random\nworker-urls: [http://a:1]\nretry-max-attempts: 2\n");
        Map<String, String> props = new HashMap<>();
        props.put("kvroute.config", yaml.toString());
        props.put("kvroute.policy", "power_of_two");
        props.put("kvroute.worker-urls", "http://x:1,http://y:2");
        props.put("kvroute.min-load-choices", "");
        props.put("kvroute.api-key", null);
        props.put("disable-circuit-breaker", "true");
        RouterConfig config = ConfigFile.fromProperties(props);
        assertThat(config.policy()).isEqualTo("power_of_two");
        assertThat(config.workerUrls()).containsExactly("http://x:1", "http://y:2");
        assertThat(config.retry().maxAttempts()).isEqualTo(2);
        assertThat(config.minLoadChoices()).isEqualTo(2);
        assertThat(config.breaker().disabled()).isTrue();
    }

    @Test
    void fromProperties_failsNamingTheKey() {
        assertThatThrownBy(() -> ConfigFile.fromProperties(Map.of("kvroute.polcy", "random")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("kvroute.polcy");
        assertThatThrownBy(() -> ConfigFile.fromProperties(Map.of("kvroute.retry-max-attempts", "many")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--retry-max-attempts")
                .hasMessageContaining("many");
        assertThatThrownBy(() -> ConfigFile.fromProperties(Map.of("kvroute.config", "/nonexistent/kvroute.yaml")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("/nonexistent/kvroute.yaml");
    }

    @Test
    void flagNames_listEveryRouterOption() {
        assertThat(ConfigFile.flagNames()).contains("config", "worker-urls", "policy", "saturation-queue-floor")
                .doesNotContain("help", "version");
        assertThat(ConfigFile.flagNames()).hasSizeGreaterThan(50);
    }
}
