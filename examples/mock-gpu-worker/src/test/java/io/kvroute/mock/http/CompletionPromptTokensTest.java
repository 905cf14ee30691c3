package io.kvroute.mock.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.worker.EngineType;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The mock tokenizes a text prompt as the engine does: with the tokenizer's special tokens (SGLang
 * {@code TokenizerManager._tokenize_texts} calls {@code self.tokenizer(texts)}, sglang
 * python/sglang/srt/managers/tokenizer_manager.py; vLLM's {@code CompletionRequest.add_special_tokens} defaults to
 * true, vllm vllm/entrypoints/openai/completion/protocol.py), and as vLLM without them when the client sends
 * {@code "add_special_tokens": false}, which SGLang does not read. The expected ids are transformers 5.17.0's
 * {@code AutoTokenizer.from_pretrained(dir)(prompt)["input_ids"]} on the bundled tokenizers.
 */
class CompletionPromptTokensTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "The router keeps a prefix tree.";
    private static final int[] LLAMA31_WITH_BOS = {128000, 791, 9457, 13912, 264, 9436, 5021, 13};
    private static final int[] LLAMA31_PLAIN = {791, 9457, 13912, 264, 9436, 5021, 13};
    private static final int[] GEMMA3_WITH_BOS = {2, 818, 21439, 15033, 496, 24905, 5028, 236761};
    private static final int[] QWEN3 = {785, 9273, 13598, 264, 9252, 4916, 13};

    private static TokenizerRegistry registry;

    @BeforeAll
    static void load() throws Exception {
        registry = TokenizerRegistry.load(Map.of("llama3_1", BundledTokenizer.of("llama3_1"),
                "gemma3", BundledTokenizer.of("gemma3"), "qwen3", BundledTokenizer.qwen3()));
    }

    @AfterAll
    static void close() {
        registry.close();
    }

    private static int[] ids(String model, EngineType engine, ApiKind kind, String body) throws Exception {
        JsonNode parsed = JSON.readTree(body);
        return RequestBodies.inputIds(kind, parsed, new TokenizerPromptEncoder(registry.forModel(model).orElseThrow(), engine));
    }

    @Test
    void completionAndGenerate_addTheBosTokenAsTheEngineDoes() throws Exception {
        String completion = "{\"prompt\":\"" + PROMPT + "\"}";
        String generate = "{\"text\":\"" + PROMPT + "\"}";
        assertThat(ids("llama3_1", EngineType.SGLANG, ApiKind.COMPLETIONS, completion)).containsExactly(LLAMA31_WITH_BOS);
        assertThat(ids("llama3_1", EngineType.SGLANG, ApiKind.GENERATE, generate)).containsExactly(LLAMA31_WITH_BOS);
        assertThat(ids("llama3_1", EngineType.VLLM, ApiKind.COMPLETIONS, completion)).containsExactly(LLAMA31_WITH_BOS);
        assertThat(ids("gemma3", EngineType.SGLANG, ApiKind.COMPLETIONS, completion)).containsExactly(GEMMA3_WITH_BOS);
        assertThat(ids("qwen3", EngineType.SGLANG, ApiKind.COMPLETIONS, completion)).containsExactly(QWEN3);
    }

    @Test
    void addSpecialTokensFalse_isFollowedByVllmOnly() throws Exception {
        String body = "{\"prompt\":\"" + PROMPT + "\",\"add_special_tokens\":false}";
        assertThat(ids("llama3_1", EngineType.VLLM, ApiKind.COMPLETIONS, body)).containsExactly(LLAMA31_PLAIN);
        assertThat(ids("llama3_1", EngineType.SGLANG, ApiKind.COMPLETIONS, body)).containsExactly(LLAMA31_WITH_BOS);
    }

    @Test
    void inputIds_areTakenAsSent() throws Exception {
        assertThat(ids("llama3_1", EngineType.SGLANG, ApiKind.COMPLETIONS, "{\"prompt\":\"x\",\"input_ids\":[791,9457]}"))
                .containsExactly(791, 9457);
    }

    /**
     * A prompt of token ids runs as given, with no BOS added (vLLM {@code parse_and_batch_prompt},
     * vllm/inputs/parse.py); before, the mock joined the ids as text and tokenized that.
     */
    @Test
    void tokenIdPrompt_isRunAsGiven_andABadIdIsA400() throws Exception {
        for (EngineType engine : new EngineType[] {EngineType.SGLANG, EngineType.VLLM}) {
            assertThat(ids("llama3_1", engine, ApiKind.COMPLETIONS, "{\"prompt\":[791,9457,13912]}"))
                    .containsExactly(791, 9457, 13912);
            assertThat(ids("llama3_1", engine, ApiKind.COMPLETIONS, "{\"prompt\":[[791],[9457,13912]]}"))
                    .as("a batch runs as one sequence in this mock").containsExactly(791, 9457, 13912);
        }
        for (String bad : new String[] {"[791,\"a\"]", "[791,1.5]", "[[]]"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> ids("llama3_1", EngineType.VLLM, ApiKind.COMPLETIONS, "{\"prompt\":" + bad + "}"))
                    .as(bad).isInstanceOf(Replies.BadRequest.class);
        }
    }
}
