package io.kvroute.router.pd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Continuation segments against an independent model of "the prompt": for random request shapes
 * and random segment splits of the generated text, every segment's prompt must be exactly the
 * original prompt plus the text generated so far. The model renders chats as ChatML by hand
 * (continue_final_message leaves the last assistant turn open; otherwise a generation prompt
 * follows), and reads completions {@code prompt} / {@code /generate} {@code text} as written.
 */
class ContinuationModelTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "/v1/chat/completions";
    private static final String COMPLETIONS = "/v1/completions";
    private static final String GENERATE = "/generate";
    private static final String[] WORDS = {"alpha", " beta", "\n", "γ", "😀", "<|im_end|>", " ", "{\"x\":1}", "end."};

    /** The model: the text an engine would be prompted with, rendered independently of the code under test. */
    static String prompt(JsonNode body, String path) {
        if (path.equals(CHAT)) {
            JsonNode messages = body.get("messages");
            boolean cont = body.path("continue_final_message").asBoolean(false);
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < messages.size(); i++) {
                JsonNode m = messages.get(i);
                String role = m.get("role").asText();
                out.append("<|im_start|>").append(role).append('\n').append(m.get("content").asText());
                if (!(cont && i == messages.size() - 1 && role.equals("assistant"))) {
                    out.append("<|im_end|>\n");
                }
            }
            if (!cont) {
                out.append("<|im_start|>assistant\n");
            }
            return out.toString();
        }
        JsonNode p = body.get(path.equals(COMPLETIONS) ? "prompt" : "text");
        return p.isArray() ? "[" + p.get(0).asText() + "]" : p.asText();
    }

    private static String text(SplittableRandom random, int maxWords) {
        StringBuilder out = new StringBuilder();
        int words = random.nextInt(maxWords + 1);
        for (int i = 0; i < words; i++) {
            out.append(WORDS[random.nextInt(WORDS.length)]);
        }
        return out.toString();
    }

    private static ObjectNode randomBody(SplittableRandom random, String path) {
        ObjectNode body = JSON.createObjectNode();
        body.put("temperature", random.nextInt(3) / 2.0);
        if (random.nextBoolean()) {
            body.put("max_tokens", 1 + random.nextInt(50));
        }
        switch (path) {
            case CHAT -> {
                ArrayNode messages = body.putArray("messages");
                if (random.nextBoolean()) {
                    messages.addObject().put("role", "system").put("content", text(random, 3));
                }
                int turns = 1 + random.nextInt(4);
                for (int t = 0; t < turns; t++) {
                    messages.addObject().put("role", "user").put("content", text(random, 4));
                    if (t < turns - 1 || random.nextInt(3) == 0) {
                        messages.addObject().put("role", "assistant").put("content", text(random, 4));
                    }
                }
                boolean endsWithAssistant = messages.get(messages.size() - 1).path("role").asText().equals("assistant");
                if (endsWithAssistant && random.nextBoolean()) {
                    body.put("continue_final_message", true);
                    body.put("add_generation_prompt", false);
                }
            }
            case COMPLETIONS -> {
                if (random.nextBoolean()) {
                    body.put("prompt", text(random, 5));
                } else {
                    body.putArray("prompt").add(text(random, 5));
                }
            }
            default -> {
                if (random.nextBoolean()) {
                    body.put("text", text(random, 5));
                } else {
                    body.putArray("text").add(text(random, 5));
                }
                body.putObject("sampling_params").put("max_new_tokens", 40);
            }
        }
        return body;
    }

    @Test
    void everySegment_isTheOriginalPromptPlusTheTextGeneratedSoFar() {
        SplittableRandom random = new SplittableRandom(20261201L);
        String[] paths = {CHAT, COMPLETIONS, GENERATE};
        for (int round = 0; round < 3_000; round++) {
            String path = paths[random.nextInt(paths.length)];
            ObjectNode original = randomBody(random, path);
            ObjectNode pristine = original.deepCopy();
            String base = prompt(original, path);
            assertThat(Continuation.supports(original, path)).as(original.toString()).isTrue();
            String generated = "";
            int segments = 1 + random.nextInt(5);
            for (int segment = 1; segment <= segments; segment++) {
                generated += text(random, 3); // this segment's output, possibly empty
                ObjectNode next = Continuation.next(original, path, generated, 7, segment);
                String expected = path.equals(CHAT) || !base.startsWith("[") ? base + generated
                        : base.substring(0, base.length() - 1) + generated + "]";
                assertThat(prompt(next, path)).as("segment %d of %s on %s", segment, original, path).isEqualTo(expected);
                assertThat(next.path("segment_index").asInt()).isEqualTo(segment);
                assertThat(next.path("high_priority_request").asBoolean()).isTrue();
                assertThat(next.get("temperature")).isEqualTo(original.get("temperature"));
                assertThat(path.equals(GENERATE) ? next.path("sampling_params").path("max_new_tokens").asInt()
                        : next.path("max_tokens").asInt()).isEqualTo(7);
            }
            assertThat(original).as("the original body is never modified").isEqualTo(pristine);
        }
    }

    @Test
    void shapesWithNoExactTextContinuation_areNotContinued() throws Exception {
        String[][] cases = {
            {COMPLETIONS, "{\"prompt\":[1,2,3]}"},
            {COMPLETIONS, "{\"prompt\":[\"a\",\"b\"]}"},
            {COMPLETIONS, "{\"prompt\":\"a\",\"n\":2}"},
            {GENERATE, "{\"input_ids\":[1,2,3]}"},
            {GENERATE, "{\"text\":[\"a\",\"b\"]}"},
            {CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"n\":3}"},
        };
        for (String[] c : cases) {
            ObjectNode body = (ObjectNode) JSON.readTree(c[1]);
            assertThat(Continuation.supports(body, c[0])).as(c[1]).isFalse();
            assertThatThrownBy(() -> Continuation.next(body, c[0], "x", 1, 1)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(Continuation.supports(JSON.readTree("{\"prompt\":\"a\",\"n\":null,\"input_ids\":null}"), COMPLETIONS)).isTrue();
        // the router forwards a chat's own rendering as input_ids: still continued, on the messages
        assertThat(Continuation.supports(JSON.readTree("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"input_ids\":[1]}"), CHAT))
                .isTrue();
    }

    @Test
    void requestedTokens_readsTheEndpointsBudget_andNullIsAbsent() throws Exception {
        assertThat(Continuation.requestedTokens(JSON.readTree("{\"max_tokens\":9}"), CHAT, 128)).isEqualTo(9);
        assertThat(Continuation.requestedTokens(JSON.readTree("{\"max_tokens\":9,\"max_completion_tokens\":5}"), CHAT, 128)).isEqualTo(5);
        assertThat(Continuation.requestedTokens(JSON.readTree("{\"max_tokens\":null}"), CHAT, 128)).isEqualTo(128);
        assertThat(Continuation.requestedTokens(JSON.readTree("{\"sampling_params\":{\"max_new_tokens\":4}}"), GENERATE, 128)).isEqualTo(4);
        assertThat(Continuation.requestedTokens(JSON.readTree("{\"sampling_params\":null}"), GENERATE, 128)).isEqualTo(128);
    }
}
