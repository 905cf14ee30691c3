package io.kvroute.examples.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.mock.MockWorkerMain;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

class EmbeddedJettyExampleTest {

    @Test
    void serviceLoaderPlugin_isInstalledOnlyWhenEnabledInPluginConfig(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path yaml = dir.resolve("router.yaml");
        java.nio.file.Files.writeString(yaml, "worker-urls: [http://127.0.0.1:1]\npolicy: round_robin\n");
        Server disabled = new Server();
        assertThat(io.kvroute.router.plugin.JettyPlugin.installEnabled(disabled, java.util.Map.of())).isEmpty();
        assertThat(disabled.getBeans(io.kvroute.router.plugin.KvRouter.class)).isEmpty();
        Server enabled = new Server();
        assertThat(io.kvroute.router.plugin.JettyPlugin.installEnabled(enabled, java.util.Map.of("kvroute-router", yaml)))
                .containsExactly("kvroute-router");
        assertThat(enabled.getBeans(io.kvroute.router.plugin.KvRouter.class)).hasSize(1);
    }

    @Test
    void mountedRouter_servesInferenceWhileHostKeepsItsOwnPaths() throws Exception {
        try (MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "1")) {
            Server server = EmbeddedJettyExample.build(0, List.of(worker.baseUrl()));
            HttpClient client = new HttpClient();
            server.start();
            client.start();
            try {
                String base = "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
                ContentResponse hello = client.GET(base + "/hello");
                assertThat(hello.getStatus()).isEqualTo(200);
                assertThat(hello.getContentAsString()).contains("host app");

                ContentResponse chat = client.newRequest(base + "/v1/chat/completions").method(HttpMethod.POST)
                        .body(new StringRequestContent("application/json",
                                "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":3}"))
                        .send();
                assertThat(chat.getStatus()).isEqualTo(200);
                assertThat(chat.getContentAsString()).contains("\"completion_tokens\":3");
                assertThat(chat.getHeaders().get("x-kvroute-worker")).isEqualTo(worker.baseUrl());

                assertThat(client.GET(base + "/nope").getStatus()).isEqualTo(404);
                assertThat(client.GET(base + "/healthz").getStatus()).isEqualTo(200);
            } finally {
                client.stop();
                server.stop();
            }
        }
    }
}
