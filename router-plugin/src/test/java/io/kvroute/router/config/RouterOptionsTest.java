package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RouterOptionsTest {

    @Test
    void defaults_matchTheDocumentedValues() {
        RouterConfig config = RouterOptions.parse();
        assertThat(config.host()).isEqualTo("127.0.0.1");
        assertThat(config.maxBodyBytes()).isEqualTo(32L * 1024 * 1024);
        assertThat(config.policy()).isEqualTo("round_robin");
        assertThat(config.minLoadChoices()).isEqualTo(2);
        assertThat(config.timeouts().requestSecs()).isEqualTo(1800);
    }

    @Test
    void flags_overrideTheYamlConfigFile(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("router.yaml");
        Files.writeString(yaml, "policy: random\nworker-urls:\n  - http://a:1\n  - http://b:2\nport: 1234\n");
        RouterConfig config = RouterOptions.parse("--config", yaml.toString(), "--policy", "power_of_two");
        assertThat(config.policy()).isEqualTo("power_of_two");
        assertThat(config.port()).isEqualTo(1234);
        assertThat(config.workerUrls()).containsExactly("http://a:1", "http://b:2");
    }

    @Test
    void tokenizerPath_perModel_asAYamlMapping_asAList_orTheFlagGivenTwice(@TempDir Path dir) throws Exception {
        for (String model : java.util.List.of("qwen3", "llama3")) {
            Files.createDirectories(dir.resolve(model));
            Files.writeString(dir.resolve(model).resolve("tokenizer.json"), "{}");
        }
        String qwen = dir.resolve("qwen3").toString();
        String llama = dir.resolve("llama3").toString();
        Path mapping = dir.resolve("mapping.yaml");
        Files.writeString(mapping, "tokenizer-path:\n  qwen3: " + qwen + "\n  llama3: " + llama + "\n");
        Path list = dir.resolve("list.yaml");
        Files.writeString(list, "tokenizer-path:\n  - qwen3=" + qwen + "\n  - llama3=" + llama + "\n");
        for (RouterConfig config : java.util.List.of(RouterOptions.parse("--config", mapping.toString()),
                RouterOptions.parse("--config", list.toString()),
                RouterOptions.parse("--tokenizer-path", "qwen3=" + qwen, "--tokenizer-path", "llama3=" + llama))) {
            assertThat(config.tokenization().tokenizerPaths()).containsExactly("qwen3=" + qwen, "llama3=" + llama);
        }
        Path nested = dir.resolve("nested.yaml");
        Files.writeString(nested, "tokenizer-path:\n  qwen3:\n    dir: " + qwen + "\n");
        assertThatThrownBy(() -> RouterOptions.parse("--config", nested.toString()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("tokenizer-path.qwen3");
    }

    @Test
    void invalidValues_failNamingTheFlagAndTheValue() {
        assertThatThrownBy(() -> RouterOptions.parse("--port", "70000"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--port").hasMessageContaining("70000");
        assertThatThrownBy(() -> RouterOptions.parse("--port", "abc"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--port").hasMessageContaining("abc");
        assertThatThrownBy(() -> RouterOptions.parse("--max-body-bytes", "0"))
                .hasMessageContaining("--max-body-bytes").hasMessageContaining("'0'");
        assertThatThrownBy(() -> RouterOptions.parse("--request-timeout-secs", "-1"))
                .hasMessageContaining("--request-timeout-secs").hasMessageContaining("-1");
        assertThatThrownBy(() -> RouterOptions.parse("--policy", "fastest"))
                .hasMessageContaining("--policy").hasMessageContaining("fastest");
        assertThatThrownBy(() -> RouterOptions.parse("--worker-urls", "ftp://x:1"))
                .hasMessageContaining("--worker-urls").hasMessageContaining("ftp://x:1");
        assertThatThrownBy(() -> RouterOptions.parse("--worker-urls", "http://"))
                .hasMessageContaining("--worker-urls");
        assertThatThrownBy(() -> RouterOptions.parse("--min-load-choices", "0"))
                .hasMessageContaining("--min-load-choices").hasMessageContaining("'0'");
    }

    @Test
    void numericChecks_comeBeforePolicyChecks() {
        assertThatThrownBy(() -> RouterOptions.parse("--policy", "nope", "--port", "-5"))
                .hasMessageContaining("--port");
    }

    @Test
    void unknownFlags_andBadConfigFiles_areClearErrors(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> RouterOptions.parse("--nonsense", "1")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("--nonsense");
        Path list = dir.resolve("list.yaml");
        Files.writeString(list, "- a\n- b\n");
        assertThatThrownBy(() -> RouterOptions.parse("--config", list.toString()))
                .hasMessageContaining("--config").hasMessageContaining("mapping");
        assertThatThrownBy(() -> RouterOptions.parse("--config", dir.resolve("missing.yaml").toString()))
                .hasMessageContaining("--config").hasMessageContaining("missing.yaml");
    }
}
