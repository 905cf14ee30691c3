package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.RouterOptions;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Over real HTTP: with {@code --api-key} everything but {@code /healthz} and
 * {@code /readyz} needs the key; {@code --metrics-port} moves {@code /metrics} to its own connector,
 * which serves nothing else and needs no key.
 */
class ApiKeyBoundaryTest {
    private static final String KEY = "inference-key-14";
    private static final String[] GOOD = {"Authorization", "Bearer " + KEY};
    private static final List<String[]> BAD = List.of(new String[0], new String[] {"Authorization", "Bearer wrong"},
            new String[] {"Authorization", KEY});
    private static Client client;

    @BeforeAll
    static void startClient() throws Exception {
        client = new Client(30);
    }

    @AfterAll
    static void stopClient() throws Exception {
        client.close();
    }

    @Test
    void apiKey_protectsModelsLoadsMetricsAndUnknownPaths_notTheProbes() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), List.of("--api-key", KEY))) {
            String workerUrl = fleet.router.router().workers().fleet().all().get(0).url();
            for (String path : List.of("/v1/models", "/v1/loads", "/metrics", "/no/such/path")) {
                for (String[] headers : BAD) {
                    Client.Reply reply = client.get(fleet.url(path), headers);
                    assertThat(reply.status()).as(path + " " + String.join(":", headers)).isEqualTo(401);
                    assertThat(reply.isOpenAiError()).isTrue();
                    assertThat(reply.header("www-authenticate")).isEqualTo("Bearer");
                    assertThat(reply.body()).doesNotContain(workerUrl).doesNotContain(KEY);
                }
            }
            assertThat(client.get(fleet.url("/v1/models"), GOOD).status()).isEqualTo(200);
            Client.Reply loads = client.get(fleet.url("/v1/loads"), GOOD);
            assertThat(loads.status()).isEqualTo(200);
            assertThat(loads.body()).contains(workerUrl);
            assertThat(client.get(fleet.url("/metrics"), GOOD).body()).contains("kvroute_");
            assertThat(client.get(fleet.url("/no/such/path"), GOOD).status()).isEqualTo(404);
            for (String probe : List.of("/healthz", "/readyz")) {
                assertThat(client.get(fleet.url(probe)).status()).as(probe).isEqualTo(200);
            }
        }
    }

    @Test
    void metricsPort_servesOnlyTheScrape_withoutTheKey_andTheMainPortNoLonger() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), List.of("--api-key", KEY, "--metrics-port", "0"))) {
            String metricsUrl = fleet.router.metricsUrl();
            assertThat(metricsUrl).isNotNull().isNotEqualTo(fleet.router.baseUrl());
            Client.Reply scrape = client.get(metricsUrl + "/metrics");
            assertThat(scrape.status()).isEqualTo(200);
            assertThat(scrape.body()).contains("kvroute_");
            assertThat(client.get(fleet.url("/metrics"), GOOD).status()).as("moved off the main port").isEqualTo(404);
            for (String path : List.of("/v1/models", "/v1/loads", "/healthz", "/workers")) {
                Client.Reply reply = client.get(metricsUrl + path, GOOD);
                assertThat(reply.status()).as(path + " on the metrics port").isEqualTo(404);
                assertThat(reply.isOpenAiError()).isTrue();
            }
            Client.Reply chat = client.postJson(metricsUrl + "/v1/chat/completions", Client.chat(false, 1), GOOD);
            assertThat(chat.status()).as("no inference through the metrics port").isEqualTo(404);
            assertThat(client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1), GOOD).status())
                    .isEqualTo(200);
        }
    }

    @Test
    void metricsPort_isValidated() {
        assertThatThrownBy(() -> RouterOptions.parse("--metrics-port", "70000"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("--metrics-port");
        assertThatThrownBy(() -> RouterOptions.parse("--port", "9000", "--metrics-port", "9000"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("must differ from --port");
        assertThat(RouterOptions.parse().metricsPort()).isNull();
    }
}
