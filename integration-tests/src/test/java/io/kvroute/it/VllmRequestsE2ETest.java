package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.mock.BundledTokenizer;
import java.time.Duration;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a vLLM worker receives through the router, read from the bytes the worker got: a chat the
 * router tokenized (and would forward {@code input_ids} for to SGLang) arrives without them, counted
 * as {@code engine_unsupported}; a token-id prompt on {@code /v1/completions} arrives unchanged.
 */
class VllmRequestsE2ETest {

    private static TestFleet fleet;
    private static Http http;

    @BeforeAll
    static void start() throws Exception {
        String dir = BundledTokenizer.qwen3().toString();
        fleet = TestFleet.start(1, List.of("--tokenizer-path", dir, "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1"),
                List.of("--tokenizer-path", dir, "--engine-type", "vllm", "--health-check-interval-secs", "0.2"));
        http = new Http();
    }

    @AfterAll
    static void stop() throws Exception {
        http.close();
        fleet.close();
    }

    private static JsonNode lastBodyAtWorker() {
        List<JsonNode> bodies = fleet.workers.get(0).handler().recentBodies();
        return bodies.get(bodies.size() - 1);
    }

    private static double metric(String name, String... labels) throws Exception {
        return MetricSum.of(http.get(fleet.url("/metrics")).getContentAsString(), name, labels);
    }

    @Test
    void chatToVllm_carriesNoRouterInputIds_andIsCounted() throws Exception {
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"What is the weather?\"}],\"max_tokens\":1}";
        // until discovery has typed the worker vllm the router treats it as any engine
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            sendChat(chat);
            return metric("kvroute_input_ids_forwarding_total", "outcome=\"engine_unsupported\"") > 0;
        });
        double before = metric("kvroute_input_ids_forwarding_total", "outcome=\"engine_unsupported\"");
        for (int i = 0; i < 3; i++) {
            assertThat(sendChat(chat)).isTrue();
            JsonNode atWorker = lastBodyAtWorker();
            assertThat(atWorker.has("input_ids")).isFalse();
            assertThat(atWorker.path("messages").get(0).path("content").asText()).isEqualTo("What is the weather?");
        }
        assertThat(metric("kvroute_input_ids_forwarding_total", "outcome=\"engine_unsupported\"")).isEqualTo(before + 3);
        // the router still tokenized and would have forwarded: the ingress outcome is unchanged
        assertThat(metric("kvroute_input_ids_forwarding_total", "outcome=\"forwarded\"")).isGreaterThanOrEqualTo(3);
    }

    @Test
    void tokenIdPromptOnCompletions_passesThroughUnchanged() throws Exception {
        ContentResponse response = http.postJson(fleet.url("/v1/completions"),
                "{\"prompt\":[9064,374,279,6722],\"max_tokens\":1}");
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        JsonNode atWorker = lastBodyAtWorker();
        assertThat(atWorker.path("prompt").toString()).isEqualTo("[9064,374,279,6722]");
        assertThat(atWorker.has("input_ids")).isFalse();
    }

    private static boolean sendChat(String chat) throws Exception {
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), chat);
        return response.getStatus() == 200;
    }
}
