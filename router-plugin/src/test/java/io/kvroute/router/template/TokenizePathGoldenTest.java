package io.kvroute.router.template;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.tokenize.ChatEncoder;
import io.kvroute.router.tokenize.ChatInput;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.UnsupportedChatException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The router's own chat path (a model directory loaded by {@code TokenizerRegistry}, its chat encoder for
 * SGLang) against the transformers goldens of all five models. Every golden conversation that SGLang
 * feeds to the template unchanged (generation prompt on, no tools, string contents, not ending on an
 * assistant turn) must give exactly transformers' ids, or be declined where Python raised; none may be
 * forwarded-equivalent and wrong.
 */
class TokenizePathGoldenTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    static List<String> models() {
        return GoldenModel.NAMES;
    }

    @ParameterizedTest
    @MethodSource("models")
    void sglangShapedGoldenConversations_encodeToTransformersIds(String name) {
        GoldenModel model = GoldenModel.get(name);
        ModelTokenizer tokenizer = model.tokenizer();
        ChatEncoder encoder = tokenizer.chatEncoder().orElseThrow(() -> new AssertionError(name + " is text-only"));
        List<String> mismatches = new ArrayList<>();
        Map<String, Integer> declines = new TreeMap<>();
        int checked = 0;
        for (GoldenModel.Case c : model.cases()) {
            if (!sglangLeavesUnchanged(c)) {
                continue;
            }
            checked++;
            JsonNode messages = JSON.valueToTree(c.messages());
            ChatInput chat = new ChatInput(messages, null, true, c.kwargs() == null ? Map.of() : c.kwargs(), false);
            int[] ids;
            try {
                ids = encoder.encode(chat);
            } catch (UnsupportedChatException e) {
                declines.merge(e.reason(), 1, Integer::sum);
                // DeepSeek V3: transformers 5 rebuilds the tokenizer, so no chat of it is engine-equivalent
                boolean rebuilt = name.equals("deepseek_v3") && e.reason().equals("tokenizer_class_rebuilt");
                if (c.error() == null && !rebuilt) {
                    mismatches.add("#" + c.id() + " declined (" + e.reason() + ") although Python rendered it");
                }
                continue;
            }
            if (c.error() != null) {
                mismatches.add("#" + c.id() + " encoded although Python raised " + c.error());
            } else if (!Arrays.equals(ids, c.fileIds())) {
                mismatches.add("#" + c.id() + " ids differ");
            }
        }
        System.out.printf("tokenize path %s: %d SGLang-shaped conversations, declines %s%n", name, checked, declines);
        if (name.equals("deepseek_v3")) {
            assertThat(declines).containsOnlyKeys("tokenizer_class_rebuilt");
        }
        assertThat(checked).as(name).isGreaterThanOrEqualTo(50);
        assertThat(mismatches).as(name).isEmpty();
    }

    /**
     * A mixed fleet: the same SGLang-rendering encoder asked for vLLM's ids ({@code encodeFor(VLLM, ...)}, or
     * its own ids when vLLM's preprocessing hands the template the same inputs). On every golden conversation
     * that vLLM feeds to the template unchanged (string contents, no tools or tool calls, the generation
     * prompt as the golden asked it, a trailing assistant turn kept) the ids must be transformers', or declined
     * where Python raised; among them the trailing-assistant and no-generation-prompt conversations, which
     * SGLang renders differently.
     */
    @ParameterizedTest
    @MethodSource("models")
    void vllmShapedGoldenConversations_encodeForVllmToTransformersIds(String name) {
        GoldenModel model = GoldenModel.get(name);
        ChatEncoder encoder = model.tokenizer().chatEncoder().orElseThrow(() -> new AssertionError(name + " is text-only"));
        List<String> mismatches = new ArrayList<>();
        Map<String, Integer> declines = new TreeMap<>();
        int checked = 0;
        int renderedForVllm = 0;
        for (GoldenModel.Case c : model.cases()) {
            if (!vllmLeavesUnchanged(c)) {
                continue;
            }
            checked++;
            ChatInput chat = new ChatInput(JSON.valueToTree(c.messages()), null, c.addGenerationPrompt(),
                    c.kwargs() == null ? Map.of() : c.kwargs(), false);
            int[] ids;
            try {
                java.util.Optional<int[]> vllm = encoder.encodeFor(io.kvroute.router.worker.EngineType.VLLM, chat);
                renderedForVllm += vllm.isPresent() ? 1 : 0;
                ids = vllm.orElseGet(() -> encoder.encode(chat));
            } catch (UnsupportedChatException e) {
                declines.merge(e.reason(), 1, Integer::sum);
                boolean expected = e.reason().equals("tokenizer_class_rebuilt") && name.equals("deepseek_v3")
                        || e.reason().equals("vllm_openai_content_format");
                if (c.error() == null && !expected) {
                    mismatches.add("#" + c.id() + " declined (" + e.reason() + ") although Python rendered it");
                }
                continue;
            }
            if (c.error() != null) {
                mismatches.add("#" + c.id() + " encoded although Python raised " + c.error());
            } else if (!Arrays.equals(ids, c.fileIds())) {
                mismatches.add("#" + c.id() + " ids differ");
            }
        }
        System.out.printf("tokenize path %s for vLLM: %d vLLM-shaped conversations, %d rendered apart from SGLang's,"
                + " declines %s%n", name, checked, renderedForVllm, declines);
        assertThat(checked).as(name).isGreaterThanOrEqualTo(50);
        if (!declines.containsKey("vllm_openai_content_format") && !name.equals("deepseek_v3")) {
            assertThat(renderedForVllm).as("%s conversations SGLang renders differently", name).isPositive();
        }
        assertThat(mismatches).as(name).isEmpty();
    }

    /** vLLM's preprocessing (in its "string" content format) is the identity on this conversation. */
    private static boolean vllmLeavesUnchanged(GoldenModel.Case c) {
        if (c.tools() != null || c.messages().isEmpty()) {
            return false;
        }
        for (Object o : c.messages()) {
            if (!(o instanceof Map<?, ?> m) || !(m.get("content") instanceof String) || m.get("tool_calls") != null) {
                return false;
            }
        }
        return true;
    }

    /** SGLang's preprocessing is the identity on this conversation. */
    private static boolean sglangLeavesUnchanged(GoldenModel.Case c) {
        if (!c.addGenerationPrompt() || c.tools() != null || c.messages().isEmpty()) {
            return false;
        }
        for (Object o : c.messages()) {
            if (!(o instanceof Map<?, ?> m) || !(m.get("content") instanceof String) || m.get("tool_calls") != null) {
                return false;
            }
        }
        Map<?, ?> last = (Map<?, ?>) c.messages().get(c.messages().size() - 1);
        return !"assistant".equals(last.get("role"));
    }
}
