package io.kvroute.examples.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.config.ConfigFile;
import io.kvroute.router.plugin.KvRouter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedJettyExampleTest {

    @Test
    void mountFromAYamlFile_isOneManagedBean(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("router.yaml");
        Files.writeString(yaml, "worker-urls: [http://127.0.0.1:1]\npolicy: round_robin\n");
        Server server = new Server();
        KvRouter router = KvRouter.mount(server, ConfigFile.load(yaml));
        assertThat(server.getBeans(KvRouter.class)).containsExactly(router);
        assertThat(router.config().workerUrls()).containsExactly("http://127.0.0.1:1");
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
