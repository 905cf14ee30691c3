package io.kvroute.router.template;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.tokenize.ChatEncoder;
import io.kvroute.router.tokenize.ChatInput;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.UnsupportedChatException;
import io.kvroute.router.worker.EngineType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The router's own chat path (a model directory loaded by {@code TokenizerRegistry}, its chat encoder for
 * SGLang) against the transformers goldens of all five models. Every golden conversation that SGLang
 * feeds to the template unchanged (generation prompt on, no tools, string contents, not ending on an
 * assistant turn) must give exactly transformers' ids, or be declined where Python raised; none may be
 * forwarded-equivalent and wrong. The same holds for vLLM's rendering of the same encoder ({@code encodeFor}),
 * which the exact KV index uses for vLLM workers in a mixed fleet.
 */
class TokenizePathGoldenTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    static List<String> models() {
        return GoldenModel.NAMES;
    }

    /** What one encoding path did over the golden conversations it was given. */
    private record Outcome(int checked, Map<String, Integer> declines, List<String> mismatches) {}

    /** An encoding path: the ids of a conversation, or UnsupportedChatException. */
    private interface Path {
        int[] encode(ChatInput chat);
    }

    /**
     * Encodes every golden conversation {@code shaped} accepts (with the golden's generation prompt, or always
     * on when {@code forceGenerationPrompt}) and compares with transformers' ids: a decline is a mismatch
     * unless Python raised too or {@code expectedDecline} accepts its reason.
     */
    private static Outcome compare(GoldenModel model, java.util.function.Predicate<GoldenModel.Case> shaped,
            boolean forceGenerationPrompt, Path path, java.util.function.Predicate<String> expectedDecline) {
        List<String> mismatches = new ArrayList<>();
        Map<String, Integer> declines = new TreeMap<>();
        int checked = 0;
        for (GoldenModel.Case c : model.cases()) {
            if (!shaped.test(c)) {
                continue;
            }
            checked++;
            JsonNode messages = JSON.valueToTree(c.messages());
            ChatInput chat = new ChatInput(messages, null, forceGenerationPrompt || c.addGenerationPrompt(),
                    c.kwargs() == null ? Map.of() : c.kwargs(), false);
            int[] ids;
            try {
                ids = path.encode(chat);
            } catch (UnsupportedChatException e) {
                declines.merge(e.reason(), 1, Integer::sum);
                if (c.error() == null && !expectedDecline.test(e.reason())) {
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
        return new Outcome(checked, declines, mismatches);
    }

    @ParameterizedTest
    @MethodSource("models")
    void sglangShapedGoldenConversations_encodeToTransformersIds(String name) {
        GoldenModel model = GoldenModel.get(name);
        ModelTokenizer tokenizer = model.tokenizer();
        ChatEncoder encoder = tokenizer.chatEncoder().orElseThrow(() -> new AssertionError(name + " is text-only"));
        // DeepSeek V3: transformers 5 rebuilds the tokenizer, so no chat of it is engine-equivalent
        Outcome o = compare(model, TokenizePathGoldenTest::sglangLeavesUnchanged, true, encoder::encode,
                reason -> name.equals("deepseek_v3") && reason.equals("tokenizer_class_rebuilt"));
        System.out.printf("tokenize path %s: %d SGLang-shaped conversations, declines %s%n", name, o.checked(), o.declines());
        if (name.equals("deepseek_v3")) {
            assertThat(o.declines()).containsOnlyKeys("tokenizer_class_rebuilt");
        }
        assertThat(o.checked()).as(name).isGreaterThanOrEqualTo(50);
        assertThat(o.mismatches()).as(name).isEmpty();
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
        int[] renderedForVllm = new int[1];
        Outcome o = compare(model, TokenizePathGoldenTest::vllmLeavesUnchanged, false, chat -> {
            Optional<int[]> vllm = encoder.encodeFor(EngineType.VLLM, chat);
            renderedForVllm[0] += vllm.isPresent() ? 1 : 0;
            return vllm.orElseGet(() -> encoder.encode(chat));
        }, reason -> reason.equals("tokenizer_class_rebuilt") && name.equals("deepseek_v3")
                || reason.equals("vllm_openai_content_format"));
        System.out.printf("tokenize path %s for vLLM: %d vLLM-shaped conversations, %d rendered apart from SGLang's,"
                + " declines %s%n", name, o.checked(), renderedForVllm[0], o.declines());
        assertThat(o.checked()).as(name).isGreaterThanOrEqualTo(50);
        if (!o.declines().containsKey("vllm_openai_content_format") && !name.equals("deepseek_v3")) {
            assertThat(renderedForVllm[0]).as("%s conversations SGLang renders differently", name).isPositive();
        }
        assertThat(o.mismatches()).as(name).isEmpty();
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
