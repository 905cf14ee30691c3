package io.kvroute.mock.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;

/**
 * With {@code --engine-api vllm} and a real tokenizer the mock renders a chat as vLLM does (vLLM
 * {@code vllm/entrypoints/chat_utils.py}: text parts joined with a newline in the "string" content format,
 * {@code add_generation_prompt} as the request asks), not as SGLang does (which always adds the generation
 * prompt, and whose list-content flattening the router does not reproduce): the prompt it counts is the
 * Qwen3 ChatML text written out here, tokenized by the real tokenizer.json.
 */
class VllmChatRenderTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BODY = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
            + "\"Hello\"},{\"type\":\"text\",\"text\":\"world of caches\"}]}],\"add_generation_prompt\":false,\"max_tokens\":1}";

    private static int promptTokens(MockWorkerMain.MockWorker worker, HttpClient client) throws Exception {
        ContentResponse r = client.newRequest(worker.baseUrl() + "/v1/chat/completions").method(HttpMethod.POST)
                .body(new StringRequestContent("application/json", BODY)).timeout(30, TimeUnit.SECONDS).send();
        assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        return JSON.readTree(r.getContentAsString()).path("usage").path("prompt_tokens").asInt();
    }

    @Test
    void vllmApi_rendersListContentAndNoGenerationPrompt_asVllm() throws Exception {
        HttpClient client = new HttpClient();
        client.start();
        try (MockWorkerMain.MockWorker vllm = MockWorkerMain.start("--port", "0", "--engine-api", "vllm", "--model-id", "m",
                "--tokenizer-path", "bundled:qwen3", "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
                TokenizerRegistry raw = TokenizerRegistry.load(Map.of("m", BundledTokenizer.qwen3()))) {
            int expected = raw.forModel("m").orElseThrow()
                    .encode("<|im_start|>user\nHello\nworld of caches<|im_end|>\n").length;
            assertThat(promptTokens(vllm, client)).isEqualTo(expected);
        } finally {
            client.stop();
        }
    }
}
