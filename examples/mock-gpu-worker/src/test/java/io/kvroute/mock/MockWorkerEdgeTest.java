package io.kvroute.mock;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;

/** The mock worker's HTTP edge on a real loopback port. */
class MockWorkerEdgeTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static ContentResponse post(HttpClient client, String url, String body) throws Exception {
        return client.newRequest(url).method(HttpMethod.POST).body(new StringRequestContent("application/json", body)).send();
    }

    @Test
    void clientsCannotSetInferencePriority_andServerInfoAdvertisesTheEngine() throws Exception {
        try (MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--prefill-queue-strategy", "hrrn",
                "--decode-ms-per-step", "1")) {
            HttpClient client = new HttpClient();
            client.start();
            try {
                ContentResponse rejected = post(client, worker.baseUrl() + "/generate",
                        "{\"text\":\"hi\",\"infer_high_priority\":-1}");
                assertThat(rejected.getStatus()).isEqualTo(400);
                assertThat(rejected.getContentAsString()).contains("infer_high_priority");

                JsonNode info = JSON.readTree(client.GET(worker.baseUrl() + "/server_info").getContentAsString());
                assertThat(info.path("role").asText()).isEqualTo("regular");
                assertThat(info.path("prefill_queue_strategy").asText()).isEqualTo("hrrn");
                assertThat(info.path("engine_loop").asText()).isEqualTo("lightllm");
                assertThat(info.path("page_size").asInt()).isPositive();
                assertThat(info.path("max_total_num_tokens").asLong()).isPositive();
                assertThat(info.path("max_running_requests").asInt()).isPositive();
                JsonNode kv = info.path("kv_events"); // SGLang's block: rank r's load on base + r
                assertThat(kv.path("endpoint_host").asText()).isEqualTo("127.0.0.1");
                assertThat(kv.path("dp_size").asInt()).isEqualTo(1);
                assertThat(kv.path("load_topic").asText()).isEqualTo("load");
                assertThat(kv.path("block_size").asInt()).isEqualTo(info.path("page_size").asInt());
                assertThat("tcp://127.0.0.1:" + kv.path("load_endpoint_port_base").asInt())
                        .isEqualTo(worker.loadEndpoints().get(0));
                assertThat(info.has("load_endpoints")).isFalse();
                assertThat(JSON.readTree(client.GET(worker.baseUrl() + "/scheduler").getContentAsString())
                        .path("counters").has("processed_prefill_tokens")).isTrue();
            } finally {
                client.stop();
            }
        }
    }

    @Test
    void repeatedPrompt_reportsCachedTokensFromThePrefixCache() throws Exception {
        try (MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "1")) {
            HttpClient client = new HttpClient();
            client.start();
            try {
                String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "shared prefix words ".repeat(200)
                        + "\"}],\"max_tokens\":2}";
                JsonNode first = JSON.readTree(post(client, worker.baseUrl() + "/v1/chat/completions", body).getContentAsString());
                JsonNode second = JSON.readTree(post(client, worker.baseUrl() + "/v1/chat/completions", body).getContentAsString());
                assertThat(first.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt()).isZero();
                int prompt = second.path("usage").path("prompt_tokens").asInt();
                int cached = second.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt();
                assertThat(cached).isPositive().isLessThanOrEqualTo(prompt);
                assertThat(prompt - cached).isLessThan(32); // everything but the last partial page
            } finally {
                client.stop();
            }
        }
    }
}
