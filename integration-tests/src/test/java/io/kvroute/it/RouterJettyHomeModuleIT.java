package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.MockWorkerMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The router as an operator deploys it into a standard Jetty distribution: jetty-home 12.1.12
 * (unpacked by Maven), a fresh base, kvroute-jetty-module.zip unzipped into it,
 * {@code start.jar --add-modules=http,kvroute-router}, properties in the generated
 * start.d/kvroute-router.ini over a YAML file, Jetty started as its own JVM, requests routed to
 * in-process mock workers, the graceful {@code --stop}, then a restart with a bad value that must fail.
 */
class RouterJettyHomeModuleIT {

    private static String chat(boolean stream) {
        return "{\"model\":\"mock-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hello from jetty-home\"}],"
                + "\"max_tokens\":8,\"stream\":" + stream + "}";
    }

    @Test
    void moduleInstallsIntoAJettyBase_routesChatAndStreams_andStopsGracefully(@TempDir Path base) throws Exception {
        MockWorkerMain.MockWorker a = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "20");
        MockWorkerMain.MockWorker b = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "20");
        try (JettyBase jetty = new JettyBase(base); Http http = new Http()) {
            jetty.unzip(Path.of(JettyBase.requiredProperty("kvroute.it.routerModuleZip")));
            String added = jetty.startJar("--add-modules=http,kvroute-router");
            assertThat(base.resolve("start.d/graceful.ini")).as("graceful comes with the module").exists();
            Path ini = base.resolve("start.d/kvroute-router.ini");
            assertThat(ini).as(added).exists();
            String template = Files.readString(ini);
            assertThat(template).contains("# kvroute.config=", "# kvroute.worker-urls=", "# kvroute.policy=",
                    "# kvroute.saturation-queue-floor=");

            // The YAML names one worker; the ini's property overrides it with both (round robin then uses both).
            Files.createDirectories(base.resolve("etc"));
            Files.writeString(base.resolve("etc/kvroute.yaml"), "worker-urls: [" + a.baseUrl() + "]\n"
                    + "policy: round_robin\nhealth-check-interval-secs: 0.5\n");
            Files.writeString(ini, "kvroute.config=etc/kvroute.yaml\nkvroute.worker-urls=" + a.baseUrl() + ","
                    + b.baseUrl() + "\n", StandardOpenOption.APPEND);

            jetty.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> http.get(jetty.url("/v1/models")).getContentAsString()
                    .contains("mock-model"));

            Set<String> servedBy = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                ContentResponse reply = http.postJson(jetty.url("/v1/chat/completions"), chat(false));
                assertThat(reply.getStatus()).as(reply.getContentAsString()).isEqualTo(200);
                assertThat(reply.getContentAsString()).contains("chat.completion");
                servedBy.add(reply.getHeaders().get("x-kvroute-worker"));
            }
            assertThat(servedBy).containsExactlyInAnyOrder(a.baseUrl(), b.baseUrl());

            Http.Reply streamed = http.stream(jetty.url("/v1/chat/completions"), chat(true)).get(30, TimeUnit.SECONDS);
            assertThat(streamed.status()).isEqualTo(200);
            assertThat(streamed.headers().get("content-type")).startsWith("text/event-stream");
            assertThat(streamed.body()).contains("chat.completion.chunk").endsWith("data: [DONE]\n\n");
            assertThat(streamed.chunkNanos().size()).as("SSE relayed chunk by chunk").isGreaterThan(2);

            ContentResponse metrics = http.get(jetty.url("/metrics"));
            assertThat(metrics.getStatus()).isEqualTo(200);
            List<String> samples = PrometheusText.parse(metrics.getContentAsString());
            assertThat(samples).anyMatch(s -> s.startsWith("kvroute_requests_total{") && s.contains("status=\"200\""));

            // Paths the router does not own fall through to Jetty's own handlers.
            assertThat(http.get(jetty.url("/not-kvroute")).getStatus()).isEqualTo(404);

            assertThat(jetty.stop()).as(jetty.output()).isZero();
            assertThat(jetty.output()).doesNotContain("Exception");

            // The same base with a bad value: Jetty refuses to start and says which key.
            Throwable refused = null;
            try {
                jetty.start("kvroute.retry-max-attempts=lots");
            } catch (IllegalStateException e) {
                refused = e;
            }
            assertThat(refused).as("Jetty must refuse to start").isNotNull();
            assertThat(refused.getMessage()).contains("--retry-max-attempts").contains("lots");
        } finally {
            a.close();
            b.close();
        }
    }
}
