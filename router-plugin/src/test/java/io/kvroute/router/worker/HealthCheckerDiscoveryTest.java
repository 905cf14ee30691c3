package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Discovery of a worker's served model and engine type over real HTTP, against a Jetty server that
 * answers like SGLang (a {@code /server_info} whose {@code model_path} differs from the served name)
 * or like vLLM (no {@code /server_info}; {@code /v1/models} with a base card and a LoRA card).
 */
class HealthCheckerDiscoveryTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final Map<String, String> routes = new ConcurrentHashMap<>();
    private Server server;
    private HttpClient client;
    private HealthChecker health;
    private WorkerRegistry registry;
    private String url;
    private volatile boolean deadEngine;
    private final java.util.Set<String> probedPaths = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void setUp() throws Exception {
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String path = Request.getPathInContext(request);
                probedPaths.add(path);
                String body = routes.get(path);
                if (path.equals("/health") && deadEngine) {
                    response.setStatus(503); // vLLM once EngineDeadError was raised
                    response.write(true, ByteBuffer.wrap("{}".getBytes(StandardCharsets.UTF_8)), callback);
                    return true;
                }
                if (body == null) {
                    response.setStatus(404);
                    callback.succeeded();
                    return true;
                }
                response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        server.start();
        url = "http://127.0.0.1:" + connector.getLocalPort();
        client = new HttpClient();
        client.start();
        registry = new WorkerRegistry();
        routes.put("/health", "");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (health != null) {
            health.close();
        }
        client.stop();
        server.stop();
    }

    private Worker discover() {
        Worker w = Worker.regular(url);
        registry.add(w);
        health = new HealthChecker(registry, client, 1000, 1000, 1, 1, null);
        health.probeAll();
        await().atMost(WAIT).until(() -> registry.get(w.id()).orElseThrow().modelId() != null);
        return registry.get(w.id()).orElseThrow();
    }

    @Test
    void theHealthProbe_goesToTheConfiguredPath_andAWorkerWithoutItTurnsUnhealthy() {
        routes.remove("/health");
        routes.put("/health_generate", "");
        Worker w = Worker.regular(url);
        registry.add(w);
        health = new HealthChecker(registry, client, io.kvroute.router.config.SettingsBinder.parse(
                io.kvroute.router.config.HealthSettings.class, "--health-check-path=/health_generate",
                "--health-failure-threshold=1"), null, null);
        health.probeAll();
        await().atMost(WAIT).until(() -> probedPaths.contains("/health_generate"));
        assertThat(probedPaths).doesNotContain("/health");
        assertThat(registry.fleet().isHealthy(w.id())).isTrue();

        health.close();
        health = new HealthChecker(registry, client, 1000, 1000, 1, 1, null); // default path: /health, absent here
        health.probeAll();
        await().atMost(WAIT).until(() -> !registry.fleet().isHealthy(w.id()));
    }

    @Test
    void sglangWithServedModelName_isRoutedByTheServedName() {
        routes.put("/server_info", "{\"model_path\":\"/models/Qwen3-8B\",\"served_model_name\":\"qwen3-served\"}");
        routes.put("/v1/models", "{\"object\":\"list\",\"data\":[{\"id\":\"qwen3-served\",\"object\":\"model\","
                + "\"owned_by\":\"sglang\",\"root\":\"qwen3-served\",\"max_model_len\":32768}]}");

        Worker w = discover();

        assertThat(w.modelId()).isEqualTo("qwen3-served");
        assertThat(w.serves("qwen3-served")).isTrue();
        assertThat(w.engine()).isEqualTo(EngineType.SGLANG);
    }

    @Test
    void adapterCards_areReported_andReadAgainOnLaterProbesOfAdapterWorkers() {
        String card = "{\"id\":\"%s\",\"object\":\"model\",\"parent\":%s}";
        routes.put("/v1/models", "{\"object\":\"list\",\"data\":[" + card.formatted("base", "null") + ","
                + card.formatted("sql", "\"base\"") + "," + card.formatted("other-base-lora", "\"elsewhere\"") + "]}");
        Map<String, HealthChecker.ModelCards> seen = new ConcurrentHashMap<>();
        Worker w = Worker.regular(url);
        registry.add(w);
        health = new HealthChecker(registry, client, 1000, 1000, 1, 1, null);
        health.onModelCards(seen::put, id -> seen.containsKey(id) && !seen.get(id).adapters().isEmpty());
        health.probeAll();
        await().atMost(WAIT).until(() -> seen.containsKey(w.id()));
        // only cards whose parent is this worker's base are its adapters
        assertThat(seen.get(w.id())).isEqualTo(new HealthChecker.ModelCards("base", java.util.Set.of("sql")));

        routes.put("/v1/models", "{\"object\":\"list\",\"data\":[" + card.formatted("base", "null") + ","
                + card.formatted("sql", "\"base\"") + "," + card.formatted("chat", "\"base\"") + "]}");
        health.probeAll(); // model known: a later probe reads the list again for the adapters
        await().atMost(WAIT).until(() -> seen.get(w.id()).adapters().size() == 2);
        assertThat(seen.get(w.id()).adapters()).containsExactlyInAnyOrder("sql", "chat");
    }

    @Test
    void vllmWithoutServerInfo_takesTheBaseCardOfV1Models() {
        routes.put("/version", "{\"version\":\"0.11.0\"}");
        routes.put("/v1/models", "{\"object\":\"list\",\"data\":["
                + "{\"id\":\"qwen3-served\",\"object\":\"model\",\"owned_by\":\"vllm\",\"root\":\"/models/Qwen3-8B\","
                + "\"parent\":null,\"max_model_len\":32768},"
                + "{\"id\":\"sql-lora\",\"object\":\"model\",\"owned_by\":\"vllm\",\"root\":\"/loras/sql\","
                + "\"parent\":\"qwen3-served\"}]}");

        Worker w = discover();

        assertThat(w.modelId()).isEqualTo("qwen3-served");
        assertThat(w.engine()).isEqualTo(EngineType.VLLM);
        assertThat(w.loadEndpoints()).isEmpty();
        await().atMost(WAIT).until(() -> "0.11.0".equals(health.engineVersion(w.id())));
    }

    /** vLLM {@code --served-model-name qwen3 qwen3-chat}: one base card per name, adapters named after the first. */
    @Test
    void vllmWithSeveralServedNames_servesEveryName_theFirstIsTheModel() {
        routes.put("/v1/models", "{\"object\":\"list\",\"data\":["
                + "{\"id\":\"qwen3\",\"object\":\"model\",\"root\":\"/models/Qwen3-8B\",\"parent\":null},"
                + "{\"id\":\"qwen3-chat\",\"object\":\"model\",\"root\":\"/models/Qwen3-8B\",\"parent\":null},"
                + "{\"id\":\"sql-lora\",\"object\":\"model\",\"root\":\"/loras/sql\",\"parent\":\"qwen3\"}]}");

        Worker w = discover();

        assertThat(w.modelId()).isEqualTo("qwen3");
        assertThat(w.modelAliases()).containsExactly("qwen3-chat");
        assertThat(w.serves("qwen3")).isTrue();
        assertThat(w.serves("qwen3-chat")).isTrue();
        assertThat(w.serves("sql-lora")).as("an adapter is not another name of the model").isFalse();
        assertThat(w.serves("llama")).isFalse();
    }

    @Test
    void vllmDeadEngine_503OnHealth_marksTheWorkerUnhealthy() {
        routes.put("/v1/models", "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"parent\":null}]}");
        Worker w = discover();
        await().atMost(WAIT).until(() -> registry.fleet().isHealthy(w.id()));
        deadEngine = true;
        health.probeAll();
        await().atMost(WAIT).until(() -> !registry.fleet().isHealthy(w.id()));
        deadEngine = false;
        health.probeAll();
        await().atMost(WAIT).until(() -> registry.fleet().isHealthy(w.id()));
    }

    @Test
    void sglangWithoutV1Models_fallsBackToServedModelNameThenModelPath() {
        routes.put("/server_info", "{\"model_path\":\"/models/Qwen3-8B\",\"served_model_name\":\"qwen3-served\"}");
        assertThat(discover().modelId()).isEqualTo("qwen3-served");
    }
}
