package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.tokenize.TokenizerArchive;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.worker.EngineType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ingress tokenizes completion prompts as the engine does, on Llama 3.1 (whose tokenizer.json post-processor
 * prepends {@code <|begin_of_text|>}, id 128000): {@code prompt} and {@code /generate} {@code text} with the BOS,
 * chats with the template's single BOS only, and a client's {@code "add_special_tokens": false} followed for a
 * vLLM fleet (vLLM reads the field, vllm vllm/entrypoints/openai/completion/protocol.py) but not for SGLang
 * (which never passes it to its tokenizer, sglang python/sglang/srt/entrypoints/openai/serving_completions.py).
 */
class IngressCompletionSpecialTokensTest {

    private static final int BOS = 128000;

    @TempDir
    static Path tmp;

    private static TokenizerRegistry sglang;
    private static TokenizerRegistry vllm;

    @BeforeAll
    static void load() throws Exception {
        Path llama = TokenizerArchive.materialize(IngressCompletionSpecialTokensTest.class.getClassLoader(), "models/llama3_1",
                Files.createDirectories(tmp.resolve("llama3_1")));
        Path deepseek = TokenizerArchive.materialize(IngressCompletionSpecialTokensTest.class.getClassLoader(),
                "models/deepseek_v3", Files.createDirectories(tmp.resolve("deepseek_v3")));
        sglang = TokenizerRegistry.load(Map.of("l", llama, "d", deepseek), 0, EngineType.SGLANG);
        vllm = TokenizerRegistry.load(Map.of("l", llama), 0, EngineType.VLLM);
    }

    @AfterAll
    static void close() {
        sglang.close();
        vllm.close();
    }

    private static IngressTokenization.Result apply(TokenizerRegistry registry, Endpoint endpoint, String model, String body)
            throws Exception {
        IngressTokenization tokenization = new IngressTokenization(registry, false, new RouterMetrics());
        return tokenization.apply(endpoint, model, body.getBytes(StandardCharsets.UTF_8), true);
    }

    private static int[] ids(TokenizerRegistry registry, Endpoint endpoint, String body) throws Exception {
        return apply(registry, endpoint, "l", body).tokens().ids();
    }

    /**
     * A mixed fleet (the registry tokenizing for SGLang): a client's {@code "add_special_tokens": false} holds for
     * vLLM workers only, so the exact index looks them up without the BOS and SGLang workers with it.
     */
    @Test
    void addSpecialTokensFalse_inAMixedFleet_givesVllmWorkersTheirOwnIds() throws Exception {
        IngressTokenization.Result result = apply(sglang, Endpoint.COMPLETIONS, "l",
                "{\"prompt\":\"Hello world\",\"add_special_tokens\":false}");
        int[] withBos = result.tokens().ids();
        assertThat(withBos[0]).isEqualTo(BOS);
        assertThat(result.engineTokenIds()).isNotNull();
        assertThat(result.engineTokenIds().forEngine(EngineType.SGLANG)).isSameAs(withBos);
        assertThat(result.engineTokenIds().forEngine(EngineType.VLLM))
                .containsExactly(java.util.Arrays.copyOfRange(withBos, 1, withBos.length));
        assertThat(apply(vllm, Endpoint.COMPLETIONS, "l", "{\"prompt\":\"Hello world\",\"add_special_tokens\":false}")
                .engineTokenIds().forEngine(EngineType.SGLANG)).containsExactly(withBos);
    }

    /**
     * transformers 5 rebuilds DeepSeek V3's tokenizer, whose completion ids differ from its tokenizer.json's on 89
     * of the 100 golden prompts ({@code CompletionPromptGoldenTest}): its completions route on the prefix tree
     * only, never looked up in the exact index, while Llama 3.1's completion ids are every worker's.
     */
    @Test
    void completionIds_reachTheExactIndex_exceptOnATokenizerTransformersRebuilds() throws Exception {
        String body = "{\"prompt\":\"Hello world\"}";
        IngressTokenization.Result deepseek = apply(sglang, Endpoint.COMPLETIONS, "d", body);
        assertThat(deepseek.tokens().ids()).isNotEmpty();
        assertThat(deepseek.engineTokenIds()).as("routing-only ids for the exact index").isNotNull();
        assertThat(deepseek.engineTokenIds().forEngine(null)).isNull();
        assertThat(deepseek.engineTokenIds().forEngine(EngineType.SGLANG)).isNull();
        assertThat(apply(sglang, Endpoint.COMPLETIONS, "l", body).engineTokenIds()).isNull();
    }

    @Test
    void completionAndGenerate_startWithTheBos_chatWithTheTemplatesOnly() throws Exception {
        int[] completion = ids(sglang, Endpoint.COMPLETIONS, "{\"model\":\"l\",\"prompt\":\"Hello world\"}");
        assertThat(completion[0]).isEqualTo(BOS);
        assertThat(ids(sglang, Endpoint.GENERATE, "{\"model\":\"l\",\"text\":\"Hello world\"}")).containsExactly(completion);
        assertThat(ids(vllm, Endpoint.COMPLETIONS, "{\"model\":\"l\",\"prompt\":\"Hello world\"}")).containsExactly(completion);
        int[] chat = ids(sglang, Endpoint.CHAT, "{\"model\":\"l\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}");
        assertThat(chat[0]).isEqualTo(BOS);
        assertThat(chat[1]).isNotEqualTo(BOS);
    }

    @Test
    void addSpecialTokensFalse_isFollowedForVllmOnly() throws Exception {
        String body = "{\"model\":\"l\",\"prompt\":\"Hello world\",\"add_special_tokens\":false}";
        int[] withBos = ids(sglang, Endpoint.COMPLETIONS, body);
        assertThat(withBos[0]).isEqualTo(BOS);
        assertThat(ids(vllm, Endpoint.COMPLETIONS, body)).containsExactly(
                java.util.Arrays.copyOfRange(withBos, 1, withBos.length));
    }
}
