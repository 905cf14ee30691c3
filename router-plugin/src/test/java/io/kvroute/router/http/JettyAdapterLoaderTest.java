package io.kvroute.router.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.lora.AdapterLoadClient;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The load request over real HTTP: the engine's path and body, and which answers count as loaded. */
class JettyAdapterLoaderTest {

    /** status and body answered per path */
    private final Map<String, Object[]> answers = new ConcurrentHashMap<>();
    private final List<String> received = new CopyOnWriteArrayList<>();
    private Server server;
    private HttpClient client;
    private String url;

    @BeforeEach
    void setUp() throws Exception {
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String path = Request.getPathInContext(request);
                received.add(request.getMethod() + " " + path + " " + Content.Source.asString(request, StandardCharsets.UTF_8));
                Object[] a = answers.getOrDefault(path, new Object[] {404, "{\"detail\":\"Not Found\"}"});
                response.setStatus((Integer) a[0]);
                response.write(true, ByteBuffer.wrap(((String) a[1]).getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        server.start();
        url = "http://127.0.0.1:" + connector.getLocalPort();
        client = new HttpClient();
        client.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        client.stop();
        server.stop();
    }

    private Worker worker(EngineType engine) {
        return Worker.regular(url).withEngine(engine);
    }

    private void load(EngineType engine) throws Exception {
        new JettyAdapterLoader(client).load(worker(engine), "sql", "/loras/sql", 5_000).get(10, TimeUnit.SECONDS);
    }

    @Test
    void vllm_postsToV1LoadLoraAdapter_withNameAndPath() throws Exception {
        answers.put("/v1/load_lora_adapter", new Object[] {200, "Success: LoRA adapter 'sql' added successfully."});
        load(EngineType.VLLM);
        assertThat(received).containsExactly("POST /v1/load_lora_adapter {\"lora_name\":\"sql\",\"lora_path\":\"/loras/sql\"}");
    }

    @Test
    void sglang_postsToLoadLoraAdapterWithoutV1() throws Exception {
        answers.put("/load_lora_adapter", new Object[] {200, "{\"success\":true}"});
        load(EngineType.SGLANG);
        assertThat(received.get(0)).startsWith("POST /load_lora_adapter ");
    }

    @Test
    void alreadyLoaded_isSuccess_anotherErrorIsAFailedLoad() throws Exception {
        answers.put("/v1/load_lora_adapter", new Object[] {400,
            "{\"object\":\"error\",\"message\":\"The lora adapter 'sql' has already been loaded.\",\"code\":400}"});
        load(EngineType.VLLM);
        answers.put("/v1/load_lora_adapter", new Object[] {400, "{\"message\":\"bad path\"}"});
        assertThatThrownBy(() -> load(EngineType.VLLM)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(AdapterLoadClient.LoadFailed.class).hasMessageContaining("400");
    }
}
