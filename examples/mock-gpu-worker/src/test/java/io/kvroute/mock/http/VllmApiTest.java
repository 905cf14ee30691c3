package io.kvroute.mock.http;

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

/** {@code --engine-api vllm}: a real mock worker on loopback answering vLLM's HTTP surface. */
class VllmApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private MockWorkerMain.MockWorker worker;
    private HttpClient client;

    @BeforeEach
    void setUp() throws Exception {
        worker = MockWorkerMain.start("--port", "0", "--engine-api", "vllm", "--model-id", "qwen3",
                "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
        client = new HttpClient();
        client.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        client.stop();
        worker.close();
    }

    private ContentResponse get(String path) throws Exception {
        return client.newRequest(worker.baseUrl() + path).timeout(10, TimeUnit.SECONDS).send();
    }

    @Test
    void metrics_speakVllmsExposition() throws Exception {
        ContentResponse r = get("/metrics");
        assertThat(r.getStatus()).isEqualTo(200);
        assertThat(r.getHeaders().get("Content-Type")).startsWith("text/plain; version=0.0.4");
        String text = r.getContentAsString();
        assertThat(text).contains("# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
                + "# TYPE vllm:num_requests_waiting gauge\n"
                + "vllm:num_requests_waiting{engine=\"0\",model_name=\"qwen3\"} 0.0\n");
        assertThat(text).contains("# TYPE vllm:num_requests_running gauge\n"
                + "vllm:num_requests_running{engine=\"0\",model_name=\"qwen3\"} 0.0\n");
        assertThat(text).contains("vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"qwen3\"} 0.0\n");
        assertThat(text).containsPattern("vllm:cache_config_info\\{block_size=\"\\d+\",enable_prefix_caching=\"True\","
                + "engine=\"0\",num_gpu_blocks=\"\\d+\",prefix_caching_hash_algo=\"sha256\"\\} 1.0\n");
        assertThat(text).doesNotContain("sglang:");
    }

    @Test
    void modelsVersionAndNoServerInfo() throws Exception {
        JsonNode card = JSON.readTree(get("/v1/models").getContentAsString()).path("data").get(0);
        assertThat(card.path("id").asText()).isEqualTo("qwen3");
        assertThat(card.path("owned_by").asText()).isEqualTo("vllm");
        assertThat(card.has("parent")).isTrue();
        assertThat(card.get("parent").isNull()).isTrue();
        assertThat(card.path("max_model_len").asLong()).isPositive();
        assertThat(JSON.readTree(get("/version").getContentAsString()).path("version").asText()).isEqualTo(VllmApi.VERSION);
        assertThat(get("/server_info").getStatus()).isEqualTo(404);
        assertThat(get("/get_server_info").getStatus()).isEqualTo(404);
        assertThat(get("/health").getStatus()).isEqualTo(200);
    }

    @Test
    void chat_ignoresInputIds_andRendersTheMessages() throws Exception {
        String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"a question about caches and routing\"}]";
        int plain = promptTokens("{" + messages + ",\"max_tokens\":1}");
        int withIds = promptTokens("{" + messages + ",\"input_ids\":[1,2,3],\"max_tokens\":1}");
        assertThat(withIds).isEqualTo(plain).isNotEqualTo(3);
        // what arrived is kept as it arrived
        assertThat(worker.handler().recentBodies().get(1).has("input_ids")).isTrue();
    }

    private int promptTokens(String body) throws Exception {
        ContentResponse r = client.newRequest(worker.baseUrl() + "/v1/chat/completions").method(HttpMethod.POST)
                .body(new StringRequestContent("application/json", body)).timeout(10, TimeUnit.SECONDS).send();
        assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        return JSON.readTree(r.getContentAsString()).path("usage").path("prompt_tokens").asInt();
    }
}
