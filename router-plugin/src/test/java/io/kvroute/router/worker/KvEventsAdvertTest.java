package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/** Discovery from SGLang's {@code /server_info} (bodies under {@code /server-info/}, sources in its README). */
class KvEventsAdvertTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void sglangBlock_wildcardHostBecomesTheWorkerHost_andRankROnBasePlusR() throws Exception {
        KvEventsAdvert a = KvEventsAdvert.parse(JSON.readTree(resource("sglang-dp2.json")));
        assertThat(a).isNotNull();
        assertThat(a.blockSize()).isEqualTo(64);
        assertThat(a.dpSize()).isEqualTo(2);
        assertThat(a.topic()).isEqualTo("kv");
        assertThat(a.loadTopic()).isEqualTo("load");
        assertThat(a.loadEndpoints("10.0.0.7")).containsExactly("tcp://10.0.0.7:5559", "tcp://10.0.0.7:5560");
        assertThat(a.eventEndpoints("10.0.0.7")).containsExactly("tcp://10.0.0.7:5557", "tcp://10.0.0.7:5558");
        assertThat(a.replayEndpoints("10.0.0.7")).isEmpty();
        assertThat(a.loadEndpoints("fd00::7")).containsExactly("tcp://[fd00::7]:5559", "tcp://[fd00::7]:5560");
    }

    @Test
    void nullOrMissingBlock_meansTheWorkerDoesNotPublish() throws Exception {
        assertThat(KvEventsAdvert.parse(JSON.readTree(resource("sglang-no-events.json")))).isNull();
        assertThat(KvEventsAdvert.parse(JSON.readTree("{\"model_path\":\"m\"}"))).isNull();
    }

    @Test
    void concreteHostIsKept_andUnusableBlocksAreIgnored() throws Exception {
        KvEventsAdvert a = KvEventsAdvert.parse(JSON.readTree(
                "{\"kv_events\":{\"endpoint_host\":\"10.1.1.1\",\"endpoint_port_base\":6000,\"dp_size\":1,"
                        + "\"replay_endpoint_port_base\":6100}}"));
        assertThat(a.eventEndpoints("10.0.0.7")).containsExactly("tcp://10.1.1.1:6000");
        assertThat(a.replayEndpoints("10.0.0.7")).containsExactly("tcp://10.1.1.1:6100");
        assertThat(a.loadEndpoints("10.0.0.7")).isEmpty();
        for (String bad : List.of("{\"kv_events\":{\"endpoint_port_base\":65535,\"dp_size\":2}}",
                "{\"kv_events\":{\"endpoint_port_base\":\"x\",\"dp_size\":1}}",
                "{\"kv_events\":{\"endpoint_port_base\":5557,\"dp_size\":0}}",
                "{\"kv_events\":{\"endpoint_port_base\":5557,\"dp_size\":100000}}",
                "{\"kv_events\":[1,2]}")) {
            assertThat(KvEventsAdvert.parse(JSON.readTree(bad))).as(bad).isNull();
        }
    }

    /** The health checker learns the load range from a real HTTP {@code /server_info} serving SGLang's body. */
    @Test
    void healthChecker_discoversLoadEndpointsFromSglangServerInfo() throws Exception {
        byte[] body = resource("sglang-dp2.json");
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response,
                    Callback callback) {
                response.setStatus(200);
                byte[] out = request.getHttpURI().getPath().equals("/server_info") ? body : "{}".getBytes();
                Content.Sink.write(response, true, new String(out, StandardCharsets.UTF_8), callback);
                return true;
            }
        });
        server.start();
        HttpClient client = new HttpClient();
        client.start();
        WorkerRegistry registry = new WorkerRegistry();
        try (HealthChecker health = new HealthChecker(registry, client, 60_000, 5_000, 1, 1, w -> { })) {
            Worker w = Worker.regular("http://127.0.0.1:" + connector.getLocalPort());
            registry.add(w);
            health.probeAll();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (registry.get(w.id()).orElseThrow().loadEndpoints().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Worker learned = registry.get(w.id()).orElseThrow();
            assertThat(learned.modelId()).isEqualTo("Qwen/Qwen3-8B");
            assertThat(learned.loadEndpoints()).containsExactly("tcp://127.0.0.1:5559", "tcp://127.0.0.1:5560");
            assertThat(learned.kvEvents().eventEndpoints(learned.host()))
                    .containsExactly("tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558");
        } finally {
            client.stop();
            server.stop();
        }
    }

    private static byte[] resource(String name) throws Exception {
        try (InputStream in = KvEventsAdvertTest.class.getResourceAsStream("/server-info/" + name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        }
    }
}
