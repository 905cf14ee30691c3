package io.kvroute.router.template;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.template.ChatTemplate.Compiled;
import io.kvroute.router.template.ChatTemplate.CompileResult;
import io.kvroute.router.template.ChatTemplate.Declined;
import io.kvroute.router.template.ChatTemplate.RenderResult;
import io.kvroute.router.template.ChatTemplate.Rendered;
import io.kvroute.router.tokenize.ModelTokenizer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every golden conversation (rendered by transformers 5.17.0 with the model's real template) must render
 * byte-identical here, or decline exactly where Python raised; and the rendered text, tokenized by the
 * model's real tokenizer.json through the project's DJL tokenizer (no special tokens added, as
 * {@code apply_chat_template} does), must equal Python's ids. Prints the per-model decline rate.
 *
 * <p>One known divergence is pinned rather than hidden: transformers 5 loads the DeepSeek V3 files
 * (tokenizer_class {@code LlamaTokenizerFast}, a byte-level tokenizer.json) as its own rebuilt
 * {@code LlamaTokenizer}, whose ids differ from what the tokenizer.json encodes (HF tokenizers 0.23.2 on
 * the same file agrees with DJL). For those cases the DJL ids must equal the file's ids, and the count of
 * diverging cases per model must stay exactly as recorded, so a router must not forward DeepSeek V3 ids to
 * an engine on transformers 5 without checking which tokenizer the engine really loads.
 */
class ChatTemplateGoldenTest {

    private static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");
    /** Golden cases where transformers 5.17.0's ids differ from tokenizer.json's, per model. */
    private static final Map<String, Integer> TRANSFORMERS_DIVERGES = Map.of("llama3", 0, "llama3_1", 0,
            "deepseek_v3", 285, "gemma3", 0, "qwen3", 0);

    static List<String> models() {
        return GoldenModel.NAMES;
    }

    @ParameterizedTest
    @MethodSource("models")
    void everyGoldenConversation_rendersAndTokenizesAsTransformers(String name) {
        GoldenModel model = GoldenModel.get(name);
        CompileResult compiled = ChatTemplate.compile(model.template);
        assertThat(compiled).as("%s compiles", name).isInstanceOf(Compiled.class);
        ChatTemplate template = ((Compiled) compiled).template();
        ModelTokenizer tokenizer = model.tokenizer();

        List<String> mismatches = new ArrayList<>();
        int diverging = 0;
        Map<String, Integer> declines = new TreeMap<>();
        List<GoldenModel.Case> cases = model.cases();
        assertThat(cases).hasSizeGreaterThanOrEqualTo(300);
        for (GoldenModel.Case c : cases) {
            RenderResult result = template.render(model.variables(c), NOW);
            if (c.error() != null) {
                if (result instanceof Declined d) {
                    declines.merge(d.reason().label(), 1, Integer::sum);
                } else {
                    mismatches.add("#" + c.id() + " rendered although Python raised " + c.error());
                }
                continue;
            }
            if (result instanceof Declined d) {
                mismatches.add("#" + c.id() + " declined (" + d.reason().label() + ": " + d.message()
                        + ") although Python rendered it");
                continue;
            }
            String text = ((Rendered) result).text();
            if (!text.equals(c.text())) {
                mismatches.add("#" + c.id() + " text differs at " + firstDifference(text, c.text()) + ":\n  java:   "
                        + excerpt(text, firstDifference(text, c.text())) + "\n  python: "
                        + excerpt(c.text(), firstDifference(text, c.text())));
                continue;
            }
            int[] ids = tokenizer.encode(text);
            if (!Arrays.equals(ids, c.fileIds())) {
                mismatches.add("#" + c.id() + " ids differ (" + ids.length + " vs " + c.fileIds().length + ")");
            }
            if (c.tokenizerJsonIds() != null) {
                diverging++;
            }
        }
        int declined = declines.values().stream().mapToInt(Integer::intValue).sum();
        System.out.printf("golden %s: %d conversations, %d rendered, %d declined (%.1f%%) %s, %d mismatches, "
                + "%d where transformers' ids differ from tokenizer.json%n", name, cases.size(),
                cases.size() - declined - mismatches.size(), declined, 100.0 * declined / cases.size(), declines,
                mismatches.size(), diverging);
        assertThat(mismatches).as(name).isEmpty();
        assertThat(diverging).as("%s cases where transformers diverges from tokenizer.json", name)
                .isEqualTo(TRANSFORMERS_DIVERGES.get(name));
    }

    private static int firstDifference(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            if (a.charAt(i) != b.charAt(i)) {
                return i;
            }
        }
        return n;
    }

    private static String excerpt(String s, int at) {
        int from = Math.max(0, at - 40);
        int to = Math.min(s.length(), at + 40);
        return s.substring(from, to).replace("\n", "\\n");
    }
}
