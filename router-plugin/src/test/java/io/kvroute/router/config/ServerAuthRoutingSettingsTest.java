package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The listen, key, routing and discovery flags as {@link Setting} records. */
class ServerAuthRoutingSettingsTest {

    private static final String API_KEY = "client-secret-123";
    private static final String ADMIN_KEY = "admin-secret-456";

    @Test
    void keys_areNeverPrinted_notInTheConfigNorItsRecordNorHelp() {
        RouterConfig config = RouterOptions.parse("--api-key", API_KEY, "--admin-api-key", ADMIN_KEY);
        assertThat(config.apiKey()).isEqualTo(API_KEY);
        assertThat(config.auth().adminApiKey()).isEqualTo(ADMIN_KEY);
        StringWriter help = new StringWriter();
        assertThat(RouterOptions.printHelpIfRequested(new PrintWriter(help), "--help", "--api-key", API_KEY)).isTrue();
        for (String printed : List.of(config.toString(), config.auth().toString(), help.toString())) {
            assertThat(printed).doesNotContain(API_KEY).doesNotContain(ADMIN_KEY);
        }
        assertThat(config.auth().toString()).contains("apiKey=set");
        assertThatThrownBy(() -> RouterOptions.parse("--admin-api-key", "short"))
                .hasMessageContaining("--admin-api-key").hasMessageNotContaining("short");
    }

    @Test
    void aKeyNoFlagGave_comesFromTheEnvironment_aFlagWins() {
        Map<String, String> env = Map.of(AuthSettings.API_KEY_ENV, "from-env", AuthSettings.ADMIN_API_KEY_ENV, "");
        AuthSettings fromEnv = AuthSettings.DEFAULTS.withEnvironment(env::get);
        assertThat(fromEnv.apiKey()).isEqualTo("from-env");
        assertThat(fromEnv.adminApiKey()).as("an empty variable is unset").isNull();
        assertThat(new AuthSettings(null, "from-flag").withEnvironment(env::get).apiKey()).isEqualTo("from-flag");
    }

    @Test
    void eachConcern_reachesItsRecord() {
        RouterConfig config = RouterOptions.parse("--host", "0.0.0.0", "--port", "8080", "--metrics-port", "9090",
                "--max-body-bytes", "1024", "--max-n", "4", "--worker-urls", "http://a:1,http://b:2", "--policy",
                "power_of_two", "--min-load-choices", "3", "--model-ids", "m1");
        assertThat(config.server()).isEqualTo(new ServerSettings("0.0.0.0", 8080, 9090, 1024, 4));
        assertThat(config.routing()).isEqualTo(new RoutingSettings(List.of("http://a:1", "http://b:2"), "power_of_two", 3,
                List.of("m1")));
        assertThat(RouterOptions.parse().server()).isEqualTo(ServerSettings.DEFAULTS);
        assertThatThrownBy(() -> RouterOptions.parse("--port", "9090", "--metrics-port", "9090"))
                .hasMessageContaining("--metrics-port must differ from --port");
    }

    @Test
    void spaceSeparatedSelectors_stopAtTheNextFlag_andAddUpWhenRepeated() {
        ServiceDiscoveryConfig discovery = RouterOptions.parse("--service-discovery", "--selector", "a=1", "b=2",
                "--service-discovery-port", "8000", "--selector", "c=3").serviceDiscovery();
        assertThat(discovery.selector()).isEqualTo(Map.of("a", "1", "b", "2", "c", "3"));
        assertThat(discovery.port()).isEqualTo(8000);
        assertThatThrownBy(() -> RouterOptions.parse("--selector")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("--selector");
    }

    @Test
    void theBuilder_checksTheDeclaredBounds_asTheCommandLineDoes() {
        assertThatThrownBy(() -> RouterConfig.builder().port(70000).build())
                .isInstanceOf(ConfigException.class).hasMessage("--port must be between 0 and 65535 (got '70000')");
        assertThatThrownBy(() -> RouterConfig.builder().minLoadChoices(0).build())
                .hasMessageContaining("--min-load-choices");
        assertThatThrownBy(() -> RouterConfig.builder().policy("fastest")).hasMessageContaining("--policy");
    }
}
