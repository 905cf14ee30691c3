package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@code --tokenizer-threads}: off (1) by default, reaches the settings, bounded to 1..64. */
class TokenizationOptionsTest {
    private static final String W = "http://127.0.0.1:1";

    @Test
    void threads_defaultOneAndReachTheSettings() {
        assertThat(RouterOptions.parse("--worker-urls", W).tokenization().threads()).isEqualTo(1);
        assertThat(RouterOptions.parse("--worker-urls", W, "--tokenizer-threads", "4").tokenization().threads()).isEqualTo(4);
    }

    @Test
    void threads_outOfRange_nameTheFlag() {
        for (String bad : new String[] {"0", "65", "-1"}) {
            assertThatThrownBy(() -> RouterOptions.parse("--worker-urls", W, "--tokenizer-threads", bad))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("--tokenizer-threads");
        }
    }
}
