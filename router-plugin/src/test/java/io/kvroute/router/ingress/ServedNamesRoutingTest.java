package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.LoopbackServer;
import io.kvroute.router.VllmStubWorker;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.worker.Worker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.server.Server;
import org.junit.jupiter.api.Test;

/**
 * One model served under several names, as {@code vllm serve --served-model-name qwen3 qwen3-chat} lists
 * it: a base card per name ({@code parent} null; vLLM {@code vllm/entrypoints/openai/models/serving.py}).
 * Real Jetty on loopback: a router discovers two vLLM-shaped stub workers (no {@code /server_info}), one
 * serving {@code qwen3} and {@code qwen3-chat}, the other {@code llama}; a request naming either name of
 * the first reaches it with the name it sent, an unknown name is a 404.
 */
class ServedNamesRoutingTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static HttpResponse<String> chat(RouterMain.RunningRouter router, String model) throws Exception {
        String body = "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1}";
        return HTTP.send(HttpRequest.newBuilder(URI.create(router.baseUrl() + "/v1/chat/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void everyServedNameOfAModel_routesToItsWorker_withTheNameTheClientSent() throws Exception {
        List<String> atQwen = new CopyOnWriteArrayList<>();
        List<String> atLlama = new CopyOnWriteArrayList<>();
        Server qwen = VllmStubWorker.start(List.of("qwen3", "qwen3-chat"), atQwen);
        Server llama = VllmStubWorker.start(List.of("llama"), atLlama);
        try (RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--load-source", "none",
                "--worker-urls", LoopbackServer.url(qwen) + "," + LoopbackServer.url(llama),
                "--health-check-interval-secs", "0.2")) {
            String qwenId = Worker.idFor(LoopbackServer.url(qwen));
            await().atMost(Duration.ofSeconds(20)).until(() -> router.router().workers().get(qwenId)
                    .map(w -> "qwen3".equals(w.modelId())).orElse(false)
                    && router.router().workers().fleet().all().stream().allMatch(w -> w.modelId() != null));
            assertThat(router.router().workers().get(qwenId).orElseThrow().modelAliases()).containsExactly("qwen3-chat");

            for (String name : List.of("qwen3-chat", "qwen3", "qwen3-chat")) {
                int before = atQwen.size();
                HttpResponse<String> r = chat(router, name);
                assertThat(r.statusCode()).as(name + ": " + r.body()).isEqualTo(200);
                assertThat(atQwen).as(name).hasSize(before + 1);
                assertThat(JSON.readTree(atQwen.get(before)).path("model").asText()).isEqualTo(name);
            }
            assertThat(atLlama).isEmpty();
            assertThat(chat(router, "llama").statusCode()).isEqualTo(200);
            assertThat(atLlama).hasSize(1);
            HttpResponse<String> listed = HTTP.send(HttpRequest.newBuilder(URI.create(router.baseUrl() + "/v1/models"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            List<String> ids = new java.util.ArrayList<>();
            JSON.readTree(listed.body()).path("data").forEach(card -> ids.add(card.path("id").asText()));
            assertThat(ids).as("the router lists every served name").containsExactly("llama", "qwen3", "qwen3-chat");
            HttpResponse<String> unknown = chat(router, "qwen3-base");
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(unknown.body()).contains("model_not_found");
        } finally {
            qwen.stop();
            llama.stop();
        }
    }
}
