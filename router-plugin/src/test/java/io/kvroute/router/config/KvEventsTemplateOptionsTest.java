package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.worker.Worker;
import org.junit.jupiter.api.Test;

/** --kv-events-template, --kv-events-worker-templates, --kv-events-annotation and the auto hash mode. */
class KvEventsTemplateOptionsTest {

    @Test
    void templates_parseIntoAdverts_perUrlWinning_hashDefaultsToAuto() {
        RouterConfig c = RouterOptions.parse("--worker-urls", "http://a:8000,http://b:8000",
                "--kv-events-template", "endpoint=tcp://*:5557;block-size=16",
                "--kv-events-worker-templates", "http://b:8000=endpoint=tcp://*:6000;block-size=32;dp-size=2");
        assertThat(c.kvEvents().hash()).isEqualTo("auto");
        assertThat(c.kvEvents().annotation()).isEqualTo("kvroute.io/kv-events");
        assertThat(c.kvEvents().templates().apply(Worker.regular("http://a:8000")).kvEvents().eventEndpoints("a"))
                .containsExactly("tcp://a:5557");
        assertThat(c.kvEvents().templates().apply(Worker.regular("http://b:8000")).kvEvents().eventEndpoints("b"))
                .containsExactly("tcp://b:6000", "tcp://b:6001");
        assertThat(RouterOptions.parse().kvEvents().templates().defaultTemplate()).isNull();
    }

    @Test
    void badTemplates_failNamingTheFlag() {
        assertThatThrownBy(() -> RouterOptions.parse("--kv-events-template", "endpoint=tcp://*:5557"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--kv-events-template")
                .hasMessageContaining("block-size is required");
        assertThatThrownBy(() -> RouterOptions.parse("--kv-events-worker-templates", "b:8000=endpoint=tcp://*:1;block-size=1"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--kv-events-worker-templates");
        assertThatThrownBy(() -> RouterOptions.parse("--kv-events-hash", "pickle"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("auto, engine, tokens");
    }
}
