package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.tokenize.RequestTokens;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two models in one running router: a Qwen3 fleet and a Llama 3 fleet of mock workers, each with its own
 * real tokenizer ({@code bundled:qwen3}, {@code bundled:llama3}), and one router given a tokenizer per model,
 * once with {@code --tokenizer-path} twice and once from a YAML {@code --config} mapping
 * {@code tokenizer-path: {MODEL: DIR}}. Each model's chat goes to its own fleet and carries {@code input_ids}
 * rendered with that model's template: exactly what its worker renders for the same body (the mock's own
 * encoding, the worker's tokenizer), and not what the other model's template gives.
 */
class TwoModelsE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private static String chat(String model, int i) {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"system\",\"content\":\"You answer briefly.\"},"
                + "{\"role\":\"user\",\"content\":\"Question " + i + " for " + model + ": where is my cache?\"}],\"max_tokens\":2}";
    }

    private static int[] ids(JsonNode body) {
        JsonNode ids = body.path("input_ids");
        assertThat(ids.isArray()).as("input_ids in %s", body).isTrue();
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ids.get(i).asInt();
        }
        return out;
    }

    private static JsonNode lastBody(MockWorkerMain.MockWorker w) {
        List<JsonNode> bodies = w.handler().recentBodies();
        return bodies.get(bodies.size() - 1);
    }

    @Test
    void twoModels_eachChatRenderedWithItsOwnTemplate_flagTwiceAndYamlMapping() throws Exception {
        Path qwenDir = BundledTokenizer.of("qwen3");
        Path llamaDir = BundledTokenizer.of("llama3");
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        try (Http http = new Http();
                TokenizerRegistry engines = TokenizerRegistry.load(Map.of("qwen3", qwenDir, "llama3", llamaDir))) {
            MockWorkerMain.MockWorker qwen = MockWorkerMain.start("--port", "0", "--model-id", "qwen3",
                    "--tokenizer-path", "bundled:qwen3", "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
            workers.add(qwen);
            MockWorkerMain.MockWorker llama = MockWorkerMain.start("--port", "0", "--model-id", "llama3",
                    "--tokenizer-path", "bundled:llama3", "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
            workers.add(llama);
            String urls = qwen.baseUrl() + "," + llama.baseUrl();
            Path yaml = tmp.resolve("router.yaml");
            Files.writeString(yaml, "port: 0\nworker-urls: " + urls + "\nhealth-check-interval-secs: 0.2\n"
                    + "tokenizer-path:\n  qwen3: " + qwenDir + "\n  llama3: " + llamaDir + "\n");
            List<String[]> routers = List.of(
                    new String[] {"--port", "0", "--worker-urls", urls, "--health-check-interval-secs", "0.2",
                        "--tokenizer-path", "qwen3=" + qwenDir, "--tokenizer-path", "llama3=" + llamaDir},
                    new String[] {"--config", yaml.toString()});
            for (String[] args : routers) {
                try (RouterMain.RunningRouter router = RouterMain.start(args)) {
                    await().atMost(Duration.ofSeconds(30)).until(() -> {
                        JsonNode models = JSON.readTree(http.get(router.baseUrl() + "/v1/models").getContentAsString());
                        return models.path("data").size() == 2;
                    });
                    for (int i = 0; i < 3; i++) {
                        for (MockWorkerMain.MockWorker w : List.of(qwen, llama)) {
                            String model = w == qwen ? "qwen3" : "llama3";
                            String other = w == qwen ? "llama3" : "qwen3";
                            String body = chat(model, i);
                            ContentResponse r = http.postJson(router.baseUrl() + "/v1/chat/completions", body);
                            assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
                            assertThat(r.getHeaders().get("x-kvroute-worker")).isEqualTo(w.baseUrl());
                            JsonNode request = JSON.readTree(body);
                            int[] forwarded = ids(lastBody(w));
                            // the worker's own encoding of the body it received, without the ids
                            int[] own = RequestTokens.of(request, engines.forModel(model)).orElseThrow().ids();
                            int[] otherTemplate = RequestTokens.of(request, engines.forModel(other)).orElseThrow().ids();
                            assertThat(forwarded).as("%s chat %d", model, i).isEqualTo(own).isNotEqualTo(otherTemplate);
                        }
                    }
                    // Llama 3's template starts with its BOS, <|begin_of_text|> (128000); Qwen3's has none
                    assertThat(ids(lastBody(llama))[0]).isEqualTo(128000);
                    assertThat(ids(lastBody(qwen))[0]).isEqualTo(151644); // <|im_start|>
                }
            }
        } finally {
            workers.forEach(MockWorkerMain.MockWorker::close);
        }
    }
}
