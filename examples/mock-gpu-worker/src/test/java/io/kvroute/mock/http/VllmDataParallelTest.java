package io.kvroute.mock.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.mock.MockWorkerMain;
import java.net.URI;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;

/**
 * {@code --engine-api vllm --dp-size 2}: one HTTP server over two engines laid out as vLLM's internal
 * load balancer runs them: one /metrics series per rank, PUB and replay sockets on base + rank, and
 * the {@code X-data-parallel-rank} header honoured.
 */
class VllmDataParallelTest {

    private static ContentResponse chat(HttpClient client, MockWorkerMain.MockWorker worker, String rank) throws Exception {
        var request = client.newRequest(worker.baseUrl() + "/v1/chat/completions").method(HttpMethod.POST)
                .body(new StringRequestContent("application/json",
                        "{\"messages\":[{\"role\":\"user\",\"content\":\"a question for one rank\"}],\"max_tokens\":1}"))
                .timeout(10, TimeUnit.SECONDS);
        if (rank != null) {
            request.headers(h -> h.put("X-data-parallel-rank", rank));
        }
        return request.send();
    }

    private static int port(String endpoint) {
        return URI.create(endpoint).getPort();
    }

    @Test
    void twoRanks_vllmPortLayout_seriesPerRank_andThePinnedRankServes() throws Exception {
        HttpClient client = new HttpClient();
        client.start();
        try (MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--engine-api", "vllm", "--dp-size", "2",
                "--model-id", "qwen3", "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1")) {
            List<String> pub = worker.kvEventEndpoints();
            List<String> replay = worker.kvEventReplayEndpoints();
            assertThat(pub).hasSize(2);
            assertThat(replay).hasSize(2);
            assertThat(port(pub.get(1))).isEqualTo(port(pub.get(0)) + 1);
            assertThat(port(replay.get(0))).isEqualTo(port(pub.get(0)) + 2);
            assertThat(port(replay.get(1))).isEqualTo(port(replay.get(0)) + 1);

            String metrics = client.GET(worker.baseUrl() + "/metrics").getContentAsString();
            assertThat(metrics).contains("vllm:num_requests_waiting{engine=\"0\",model_name=\"qwen3\"} 0.0\n"
                    + "vllm:num_requests_waiting{engine=\"1\",model_name=\"qwen3\"} 0.0\n");
            assertThat(metrics).containsOnlyOnce("# TYPE vllm:cache_config_info gauge");
            assertThat(metrics).contains("engine=\"1\",num_gpu_blocks=");

            assertThat(chat(client, worker, "1").getStatus()).isEqualTo(200);
            assertThat(chat(client, worker, "1").getStatus()).isEqualTo(200);
            assertThat(worker.requestsByRank()).containsExactly(0, 2);
            assertThat(chat(client, worker, null).getStatus()).isEqualTo(200);
            assertThat(worker.requestsByRank()).as("idle ranks: the lowest wins").containsExactly(1, 2);

            ContentResponse bad = chat(client, worker, "2");
            assertThat(bad.getStatus()).isEqualTo(400);
            assertThat(bad.getContentAsString()).contains("X-data-parallel-rank", "0..1");
            assertThat(chat(client, worker, "one").getStatus()).isEqualTo(400);
            assertThat(worker.requestsByRank()).containsExactly(1, 2);
        } finally {
            client.stop();
        }
    }

    @Test
    void fixedEventPort_replayFollowsThePubRange() throws Exception {
        int base = MockWorkerMain.freePortRangeForTests("127.0.0.1", 4);
        try (MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--engine-api", "vllm", "--dp-size", "2",
                "--kv-events-endpoint", "tcp://127.0.0.1:" + base)) {
            assertThat(worker.kvEventEndpoints()).containsExactly("tcp://127.0.0.1:" + base, "tcp://127.0.0.1:" + (base + 1));
            assertThat(worker.kvEventReplayEndpoints())
                    .containsExactly("tcp://127.0.0.1:" + (base + 2), "tcp://127.0.0.1:" + (base + 3));
        }
    }

    @Test
    void dataParallel_needsTheVllmApi() {
        assertThatThrownBy(() -> MockWorkerMain.start("--port", "0", "--dp-size", "2"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--engine-api vllm");
    }
}
