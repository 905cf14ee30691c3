package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The chat prefix cache must return exactly the ids of a full tokenization, always: checked with the
 * real Qwen3 tokenizer over random multi-turn conversations whose texts sit on the boundaries that could
 * break the cut (whitespace and newlines at message ends, typed ChatML markers and lookalikes, CJK,
 * emoji, combining marks right after a marker, digits runs, CRLF).
 */
class ChatPrefixCacheTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Pieces chosen to sit on tokenizer boundaries; joined at random. */
    private static final String[] PIECES = {
        "hello", " world", "  ", "\n", "\n\n", "\r\n", " \n", "\t", "12345", "3.14", "'s", "'ll", "Don't",
        "<|im_start|>", "<|im_end|>", "<|im_start|>user\n", "<|im_start", "im_start|>", "<think>", "</think>",
        "<tool_response>", "</tool_response>", "你好，世界", "日本語のテキスト", "😀", "👩‍💻", "🇺🇳", "\u0301", "e\u0301",
        "Ω", "ß", "İ", "\u00a0", "...", "!!", "```java\nint x = 1;\n```", "http://example.com/a?b=c", "\u0000", "𠀀",
    };

    @Test
    void cachedIds_equalFullTokenization_overRandomGrowingConversations() {
        ModelTokenizer tok = Qwen3Fixture.tokenizer();
        ChatEncoder base = Qwen3Fixture.chatEncoder();
        int markerId = tok.encode(ChatPrefixCache.MARKER)[0];
        ChatPrefixCache cache = new ChatPrefixCache(8L << 20);
        Random rnd = new Random(20261201L);
        int checked = 0;
        for (int conversation = 0; conversation < 40; conversation++) {
            ArrayNode messages = JSON.createArrayNode();
            if (rnd.nextBoolean()) {
                messages.add(message("system", randomText(rnd)));
            }
            int turns = 1 + rnd.nextInt(6);
            for (int turn = 0; turn < turns; turn++) {
                messages.add(message("user", randomText(rnd)));
                boolean agp = rnd.nextInt(4) != 0;
                boolean thinking = rnd.nextBoolean();
                String rendered = base.render(ChatInput.of(messages, agp, thinking));
                int[] expected = tok.encode(rendered);
                assertThat(cache.encode(rendered, markerId, tok::encode))
                        .as("conversation %d turn %d: %s", conversation, turn, rendered)
                        .containsExactly(expected);
                // The same prompt again comes entirely from the cache and is still exact.
                assertThat(cache.encode(rendered, markerId, tok::encode)).containsExactly(expected);
                checked++;
                String reply = rnd.nextBoolean() ? randomText(rnd)
                        : "<think>\n" + randomText(rnd) + "\n</think>\n\n" + randomText(rnd);
                messages.add(message("assistant", reply));
            }
        }
        assertThat(checked).isGreaterThan(60);
        assertThat(cache.hitSegments()).as("later turns reuse earlier segments").isGreaterThan(cache.missSegments());
    }

    @Test
    void turnN_tokenizesOnlyTheNewMessages() {
        ModelTokenizer tok = Qwen3Fixture.tokenizer();
        ChatEncoder base = Qwen3Fixture.chatEncoder();
        int markerId = tok.encode(ChatPrefixCache.MARKER)[0];
        ChatPrefixCache cache = new ChatPrefixCache(8L << 20);
        AtomicLong charsEncoded = new AtomicLong();
        Function<String, int[]> counting = text -> {
            charsEncoded.addAndGet(text.length());
            return tok.encode(text);
        };
        ArrayNode messages = JSON.createArrayNode();
        messages.add(message("system", "You are terse. ".repeat(200)));
        messages.add(message("user", "first question ".repeat(300)));
        cache.encode(base.render(ChatInput.of(messages, true, true)), markerId, counting);
        messages.add(message("assistant", "first answer ".repeat(300)));
        String newQuestion = "and the second one?";
        messages.add(message("user", newQuestion));
        charsEncoded.set(0);
        String rendered = base.render(ChatInput.of(messages, true, true));
        assertThat(cache.encode(rendered, markerId, counting)).containsExactly(tok.encode(rendered));
        // Encoded now: the assistant turn (new as a history turn), the new user turn, the generation prompt.
        assertThat(charsEncoded.get()).isLessThan("first answer ".length() * 300L + newQuestion.length() + 100);
        assertThat(charsEncoded.get()).isLessThan(rendered.length() / 2);
    }

    @Test
    void bytesHeld_neverExceedTheBound() {
        ModelTokenizer tok = Qwen3Fixture.tokenizer();
        ChatEncoder base = Qwen3Fixture.chatEncoder();
        int markerId = tok.encode(ChatPrefixCache.MARKER)[0];
        long bound = 64 * 1024;
        ChatPrefixCache cache = new ChatPrefixCache(bound);
        Random rnd = new Random(7);
        for (int i = 0; i < 80; i++) {
            ArrayNode messages = JSON.createArrayNode();
            messages.add(message("user", randomText(rnd) + " request " + i + " " + "pad ".repeat(rnd.nextInt(400))));
            String rendered = base.render(ChatInput.of(messages, true, true));
            assertThat(cache.encode(rendered, markerId, tok::encode)).containsExactly(tok.encode(rendered));
            assertThat(cache.bytesHeld()).isLessThanOrEqualTo(bound);
        }
        assertThat(cache.bytesHeld()).isPositive();
    }

    @Test
    void markerCountMismatch_storesNothing_andStillAnswersTheFullEncoding() {
        // A tokenizer that breaks the invariant (the marker is not one id): nothing may be cached from it.
        Function<String, int[]> noMarkerId = text -> text.chars().toArray();
        ChatPrefixCache cache = new ChatPrefixCache(1 << 20);
        String rendered = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
        assertThat(cache.encode(rendered, -1, noMarkerId)).containsExactly(rendered.chars().toArray());
        assertThat(cache.encode(rendered, -1, noMarkerId)).containsExactly(rendered.chars().toArray());
        assertThat(cache.hitSegments()).isZero();
        assertThat(cache.bytesHeld()).isZero();
    }

    @Test
    void segments_cutAtEveryMarker_includingTypedOnes() {
        String rendered = "<|im_start|>user\nsay <|im_start|> please<|im_end|>\n<|im_start|>assistant\n";
        int[] starts = ChatPrefixCache.segmentStarts(rendered);
        List<String> pieces = new ArrayList<>();
        for (int i = 0; i < starts.length; i++) {
            pieces.add(rendered.substring(starts[i], i + 1 < starts.length ? starts[i + 1] : rendered.length()));
        }
        assertThat(pieces).containsExactly("<|im_start|>user\nsay ", "<|im_start|> please<|im_end|>\n",
                "<|im_start|>assistant\n");
        assertThat(String.join("", pieces)).isEqualTo(rendered);
    }

    @Test
    void segmentEquality_isCheckedOnHit() {
        ChatPrefixCache.Segment s = new ChatPrefixCache.Segment("<|im_start|>user\nabc", new int[] {1, 2});
        String text = "xx<|im_start|>user\nabc<|im_start|>user\nabd";
        assertThat(s.textEquals(text, 2, 22)).isTrue();
        assertThat(s.textEquals(text, 22, text.length())).isFalse();
        assertThat(s.textEquals(text, 2, 21)).isFalse();
    }

    @Test
    void hashRange_dependsOnTheRangeOnly_andOnEveryCharOfIt() {
        String segment = "<|im_start|>user\n数据 🙂 tail";
        for (String before : new String[] {"", "x", "xy", "xyz", "<|im_start|>system\nhi"}) {
            // the same segment at any offset (every lane alignment) hashes the same: keys repeat across turns
            String text = before + segment + "after";
            assertThat(ChatPrefixCache.hashRange(text, before.length(), before.length() + segment.length()))
                    .isEqualTo(ChatPrefixCache.hashRange(segment, 0, segment.length()));
        }
        long base = ChatPrefixCache.hashRange(segment, 0, segment.length());
        for (int i = 0; i < segment.length(); i++) {
            // a change in any position (so in each of the four lanes and the tail) changes the hash
            String changed = segment.substring(0, i) + (char) (segment.charAt(i) ^ 1) + segment.substring(i + 1);
            assertThat(ChatPrefixCache.hashRange(changed, 0, changed.length())).as("char %d", i).isNotEqualTo(base);
        }
    }

    private static ObjectNode message(String role, String content) {
        ObjectNode m = JSON.createObjectNode();
        m.put("role", role);
        m.put("content", content);
        return m;
    }

    private static String randomText(Random rnd) {
        StringBuilder sb = new StringBuilder();
        int n = rnd.nextInt(12);
        for (int i = 0; i < n; i++) {
            sb.append(PIECES[rnd.nextInt(PIECES.length)]);
        }
        return sb.toString();
    }
}
