package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LoadSourceOptionsTest {
    private static final String W = "http://127.0.0.1:1";

    @Test
    void defaults_autoSourceAutoEngine200msScrapes() {
        LoadSourceConfig c = RouterOptions.parse("--worker-urls", W).loadSource();
        assertThat(c).isEqualTo(LoadSourceConfig.DEFAULTS);
        assertThat(c.scrapeIntervalMs()).isEqualTo(200);
    }

    @Test
    void flags_reachTheConfig() {
        LoadSourceConfig c = RouterOptions.parse("--worker-urls", W, "--load-source", "metrics", "--engine-type", "vllm",
                "--metrics-scrape-interval-ms", "50", "--metrics-scrape-timeout-ms", "40", "--metrics-staleness-ms", "200",
                "--metrics-waiting-name", "fork:waiting", "--metrics-running-name", "fork:running",
                "--metrics-kv-usage-name", "fork_kv").loadSource();
        assertThat(c).isEqualTo(new LoadSourceConfig("metrics", "vllm", 50, 40, 200, "fork:waiting", "fork:running",
                "fork_kv", 5));
    }

    @Test
    void badValues_nameTheFlag() {
        String[][] bad = {{"--load-source", "push"}, {"--engine-type", "tgi"}, {"--metrics-scrape-interval-ms", "5"},
                {"--metrics-scrape-timeout-ms", "0"}, {"--metrics-staleness-ms", "200"},
                {"--metrics-waiting-name", "no spaces"}};
        for (String[] b : bad) {
            assertThatThrownBy(() -> RouterOptions.parse("--worker-urls", W, b[0], b[1]))
                    .isInstanceOf(ConfigException.class).hasMessageContaining(b[0]);
        }
    }
}
