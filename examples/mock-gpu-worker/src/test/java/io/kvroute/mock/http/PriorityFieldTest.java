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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The request's {@code priority} field on real mock workers over loopback, read as each engine reads it:
 * vLLM refuses a non-zero priority unless it runs {@code --scheduling-policy priority} (vLLM
 * {@code vllm/v1/engine/processor.py}); SGLang ignores it without {@code --enable-priority-scheduling}.
 */
class PriorityFieldTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static HttpClient client;

    @BeforeAll
    static void startClient() throws Exception {
        client = new HttpClient();
        client.start();
    }

    @AfterAll
    static void stopClient() throws Exception {
        client.stop();
    }

    private static ContentResponse chat(MockWorkerMain.MockWorker worker, String priorityJson) throws Exception {
        String body = "{\"model\":\"qwen3\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
                + (priorityJson == null ? "" : ",\"priority\":" + priorityJson) + "}";
        return client.newRequest(worker.baseUrl() + "/v1/chat/completions").method(HttpMethod.POST)
                .body(new StringRequestContent("application/json", body)).timeout(10, TimeUnit.SECONDS).send();
    }

    private static MockWorkerMain.MockWorker start(String... extra) throws Exception {
        String[] base = {"--port", "0", "--model-id", "qwen3", "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1"};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        return MockWorkerMain.start(args);
    }

    @Test
    void vllmWithoutPriorityScheduling_refusesANonZeroPriority_asVllmDoes() throws Exception {
        try (MockWorkerMain.MockWorker worker = start("--engine-api", "vllm")) {
            ContentResponse refused = chat(worker, "-1");
            assertThat(refused.getStatus()).isEqualTo(400);
            assertThat(JSON.readTree(refused.getContentAsString()).path("error").path("message").asText())
                    .isEqualTo("Got priority -1 but Priority scheduling is not enabled.");
            assertThat(chat(worker, "0").getStatus()).isEqualTo(200);
            assertThat(chat(worker, null).getStatus()).isEqualTo(200);
            assertThat(chat(worker, "null").getStatus()).as("JSON null means absent").isEqualTo(200);
        }
    }

    @Test
    void vllmWithPriorityScheduling_servesIt_andABadValueIsA400() throws Exception {
        try (MockWorkerMain.MockWorker worker = start("--engine-api", "vllm", "--scheduling-policy", "priority")) {
            assertThat(chat(worker, "-1").getStatus()).isEqualTo(200);
            assertThat(chat(worker, "7").getStatus()).isEqualTo(200);
            for (String bad : new String[] {"1.5", "\"high\"", "99999999999", "[1]"}) {
                ContentResponse r = chat(worker, bad);
                assertThat(r.getStatus()).as(bad).isEqualTo(400);
                JsonNode error = JSON.readTree(r.getContentAsString()).path("error");
                assertThat(error.path("message").asText()).as(bad).isEqualTo("'priority' must be an integer");
            }
        }
    }

    @Test
    void sglangWithoutPriorityScheduling_ignoresTheField() throws Exception {
        try (MockWorkerMain.MockWorker worker = start()) {
            assertThat(chat(worker, "5").getStatus()).isEqualTo(200);
        }
        try (MockWorkerMain.MockWorker worker = start("--enable-priority-scheduling")) {
            assertThat(chat(worker, "5").getStatus()).isEqualTo(200);
            assertThat(JSON.readTree(client.newRequest(worker.baseUrl() + "/scheduler").timeout(10, TimeUnit.SECONDS)
                    .send().getContentAsString()).toString()).contains("\"priority_scheduling\":true");
        }
    }

    @Test
    void anUnknownSchedulingPolicy_isRefusedAtStart() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> start("--scheduling-policy", "lifo"))
                .hasMessageContaining("--scheduling-policy must be fcfs or priority");
    }
}
