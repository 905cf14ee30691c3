package io.kvroute.mock.lora;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.MockWorkerMain;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A real mock worker with {@code --max-loras} on loopback: vLLM's LoRA surface and adapter-scoped caching. */
class LoraApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private MockWorkerMain.MockWorker worker;
    private HttpClient client;

    @BeforeEach
    void setUp() throws Exception {
        client = new HttpClient();
        client.start();
    }

    private void start(String... extra) throws Exception {
        String[] base = {"--port", "0", "--engine-api", "vllm", "--model-id", "qwen3", "--decode-ms-per-step", "1",
            "--prefill-ms-per-1k", "1", "--max-loras", "2", "--lora-load-ms", "20", "--lora-modules", "sql=/loras/sql"};
        String[] args = java.util.Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        worker = MockWorkerMain.start(args);
    }

    @AfterEach
    void tearDown() throws Exception {
        client.stop();
        if (worker != null) {
            worker.close();
        }
    }

    private ContentResponse get(String path) throws Exception {
        return client.newRequest(worker.baseUrl() + path).timeout(10, TimeUnit.SECONDS).send();
    }

    private ContentResponse post(String path, String body) throws Exception {
        return client.newRequest(worker.baseUrl() + path).method(HttpMethod.POST).timeout(10, TimeUnit.SECONDS)
                .body(new StringRequestContent("application/json", body)).send();
    }

    private ContentResponse complete(String model, String prompt) throws Exception {
        return post("/v1/completions", "{\"model\":\"" + model + "\",\"prompt\":\"" + prompt + "\",\"max_tokens\":2}");
    }

    private static long cached(ContentResponse r) throws Exception {
        return JSON.readTree(r.getContent()).path("usage").path("prompt_tokens_details").path("cached_tokens").asLong();
    }

    @Test
    void modelsListAdaptersWithParent_andMetricsCarryVllmsLoraGauge() throws Exception {
        start();
        JsonNode data = JSON.readTree(get("/v1/models").getContent()).path("data");
        assertThat(data).hasSize(2);
        assertThat(data.get(0).path("id").asText()).isEqualTo("qwen3");
        assertThat(data.get(0).get("parent").isNull()).isTrue();
        assertThat(data.get(1).path("id").asText()).isEqualTo("sql");
        assertThat(data.get(1).path("parent").asText()).isEqualTo("qwen3");
        assertThat(data.get(1).path("root").asText()).isEqualTo("/loras/sql");

        assertThat(complete("sql", "hello there").getStatus()).isEqualTo(200);
        String metrics = get("/metrics").getContentAsString();
        assertThat(metrics).containsPattern("vllm:lora_requests_info\\{max_lora=\"2\",running_lora_adapters=\"\","
                + "waiting_lora_adapters=\"\"\\} \\d\\.\\d+e\\+09\n");
        assertThat(JSON.readTree(get("/debug/lora").getContent()).path("loads").asLong()).isEqualTo(1);
    }

    @Test
    void unknownAdapter_is404_andTheLoadEndpointsAreAbsent_withoutRuntimeUpdating() throws Exception {
        start();
        ContentResponse r = complete("nope", "hi");
        assertThat(r.getStatus()).isEqualTo(404);
        assertThat(JSON.readTree(r.getContent()).path("message").asText()).isEqualTo("The model `nope` does not exist.");
        assertThat(post("/v1/load_lora_adapter", "{\"lora_name\":\"x\",\"lora_path\":\"/x\"}").getStatus()).isEqualTo(404);
        assertThat(complete("qwen3", "hi").getStatus()).isEqualTo(200); // the base model is no adapter
    }

    @Test
    void runtimeUpdating_loadsOnceUnloadsAndResolvesUnknownNames() throws Exception {
        start("--lora-runtime-updating");
        ContentResponse load = post("/v1/load_lora_adapter", "{\"lora_name\":\"chat\",\"lora_path\":\"/loras/chat\"}");
        assertThat(load.getStatus()).isEqualTo(200);
        assertThat(load.getContentAsString()).isEqualTo("Success: LoRA adapter 'chat' added successfully.");
        ContentResponse again = post("/load_lora_adapter", "{\"lora_name\":\"chat\",\"lora_path\":\"/loras/chat\"}");
        assertThat(again.getStatus()).isEqualTo(400);
        assertThat(again.getContentAsString()).contains("has already been loaded");
        assertThat(post("/v1/load_lora_adapter", "{\"lora_name\":\"x\"}").getStatus()).isEqualTo(400);
        assertThat(complete("chat", "hi").getStatus()).isEqualTo(200);
        assertThat(JSON.readTree(get("/debug/lora").getContent()).path("loads").asLong()).isEqualTo(1); // warm, then resident
        assertThat(post("/v1/unload_lora_adapter", "{\"lora_name\":\"chat\"}").getStatus()).isEqualTo(200);
        assertThat(post("/unload_lora_adapter", "{\"lora_name\":\"chat\"}").getStatus()).isEqualTo(404);
        assertThat(complete("resolved-on-request", "hi").getStatus()).isEqualTo(200);
    }

    @Test
    void prefixCache_isScopedByAdapter() throws Exception {
        start("--page-size", "4");
        String prompt = "the same long prompt under several adapters, long enough for a few pages of cache";
        assertThat(cached(complete("qwen3", prompt))).isZero();
        assertThat(cached(complete("qwen3", prompt))).isPositive(); // the base model hits its own pages
        assertThat(cached(complete("sql", prompt))).isZero(); // the adapter does not see the base's pages
        assertThat(cached(complete("sql", prompt))).isPositive();
    }
}
