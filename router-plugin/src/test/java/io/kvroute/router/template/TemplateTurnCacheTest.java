package io.kvroute.router.template;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.kvroute.router.tokenize.ChatEncoder;
import io.kvroute.router.tokenize.ChatInput;
import io.kvroute.router.tokenize.ChatPrefixCache;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.PrefixCachedTokenizer;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.tokenize.UnsupportedChatException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The chat prefix cache on all five golden models, at the turn markers found from each template: over
 * random growing conversations (whitespace at both ends, marker lookalikes and the markers themselves typed
 * by the user, CJK, emoji), the cached ids always equal the uncached encoder's, and later turns reuse
 * earlier segments.
 */
class TemplateTurnCacheTest {

    private static final Map<String, List<String>> EXPECTED_MARKERS = Map.of(
            // this Llama 3 template always renders the assistant header: the next answer diverges after it
            "llama3", List.of("<|start_header_id|>", "<|end_header_id|>"),
            "llama3_1", List.of("<|start_header_id|>"),
            "gemma3", List.of("<start_of_turn>"), "qwen3", List.of("<|im_start|>"));
    private static final String[] PIECES = {"hello", " world ", "你好", "😀", "\u00a0", "\n", "\r\n", "<|im_start|>",
            "<|start_header_id|>", "<start_of_turn>", "<｜User｜>", "<|eot_id|>", "<start_of", "|im_start", "x"};

    static List<String> models() {
        return List.of("llama3", "llama3_1", "gemma3", "qwen3");
    }

    /**
     * DeepSeek V3's chat ids are never engine-equivalent (transformers 5 rebuilds its tokenizer, see
     * {@code ChatTemplateGoldenTest}): it gets no cache, and says why.
     */
    @org.junit.jupiter.api.Test
    void deepseekV3_isNeverEngineEquivalent_soRunsWithoutTheCache() throws Exception {
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of("d", GoldenModel.get("deepseek_v3").dir), 8L << 20)) {
            ModelTokenizer tok = registry.forModel("d").orElseThrow();
            assertThat(tok).isNotInstanceOf(PrefixCachedTokenizer.class);
            assertThat(registry.chatCacheDeclines()).containsEntry("d", "tokenizer_class_rebuilt");
            ArrayNode messages = JsonNodeFactory.instance.arrayNode();
            messages.addObject().put("role", "user").put("content", "hello");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> tok.chatEncoder().orElseThrow()
                    .encode(ChatInput.of(messages, true, true)))
                    .isInstanceOfSatisfying(UnsupportedChatException.class,
                            e -> assertThat(e.reason()).isEqualTo("tokenizer_class_rebuilt"));
        }
    }

    /** A template that starts messages with no added token has no safe cut: no cache, and the reason is reported. */
    @org.junit.jupiter.api.Test
    void templateWithoutTurnTokens_declinesTheCache(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Files.copy(GoldenModel.get("qwen3").dir.resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
        java.nio.file.Files.writeString(dir.resolve("chat_template.jinja"),
                "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}");
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of("plain", dir), 8L << 20)) {
            assertThat(registry.forModel("plain").orElseThrow().chatEncoder()).isPresent();
            assertThat(registry.forModel("plain").orElseThrow()).isNotInstanceOf(PrefixCachedTokenizer.class);
            assertThat(registry.chatCacheDeclines()).containsEntry("plain", "no_splitting_marker");
            assertThat(registry.chatPrefixCaches()).isEmpty();
        }
    }

    private static String text(Random rnd) {
        StringBuilder sb = new StringBuilder();
        for (int i = 1 + rnd.nextInt(12); i > 0; i--) {
            sb.append(PIECES[rnd.nextInt(PIECES.length)]);
        }
        return sb.toString();
    }

    @ParameterizedTest
    @MethodSource("models")
    void cachedIds_equalUncached_atTheTemplatesOwnTurnMarkers(String name) throws Exception {
        GoldenModel model = GoldenModel.get(name);
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of(name, model.dir), 8L << 20)) {
            ModelTokenizer tok = registry.forModel(name).orElseThrow();
            assertThat(tok).isInstanceOf(PrefixCachedTokenizer.class);
            PrefixCachedTokenizer cached = (PrefixCachedTokenizer) tok;
            assertThat(cached.markers()).as(name).containsExactlyInAnyOrderElementsOf(EXPECTED_MARKERS.get(name));
            ChatEncoder withCache = cached.chatEncoder().orElseThrow();
            ChatEncoder without = cached.delegate().chatEncoder().orElseThrow();
            ChatPrefixCache cache = cached.cache();
            Random rnd = new Random(20261202L);
            int checked = 0;
            for (int conversation = 0; conversation < 25; conversation++) {
                ArrayNode messages = JsonNodeFactory.instance.arrayNode();
                if (rnd.nextBoolean()) {
                    messages.addObject().put("role", "system").put("content", text(rnd));
                }
                for (int turn = 0; turn < 1 + rnd.nextInt(5); turn++) {
                    messages.addObject().put("role", "user").put("content", text(rnd));
                    ChatInput chat = ChatInput.of(messages.deepCopy(), true, rnd.nextBoolean());
                    int[] expected;
                    try {
                        expected = without.encode(chat);
                    } catch (UnsupportedChatException e) {
                        continue; // the template raises: so does the cached path (checked below)
                    }
                    assertThat(withCache.encode(chat)).as("%s conversation %d turn %d", name, conversation, turn)
                            .containsExactly(expected);
                    checked++;
                    messages.addObject().put("role", "assistant").put("content", text(rnd));
                }
            }
            assertThat(checked).as(name).isGreaterThan(30);
            assertThat(cache.hitSegments()).as("%s: later turns reuse earlier segments", name).isPositive();
        }
    }
}
