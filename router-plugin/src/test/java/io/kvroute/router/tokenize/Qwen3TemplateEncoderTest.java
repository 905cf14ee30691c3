package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * Focused behaviours of the Qwen3 template rendered by the template encoder with no engine preprocessing,
 * with expectations derived by hand from the template text (the exhaustive checks are
 * {@link Qwen3ReferenceParityTest} and the template package's golden test). Code points stand in for ids.
 */
class Qwen3TemplateEncoderTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final ChatEncoder encoder = Qwen3Fixture.plainEncoder(s -> s.codePoints().toArray());

    private static JsonNode msgs(String json) {
        try {
            return JSON.readTree(json.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Test
    void render_leadingSystemThenUserThenGenerationPrompt() {
        String out = encoder.render(ChatInput.of(msgs("[{'role':'system','content':'S'},{'role':'user','content':'U'}]"), true, true));
        assertThat(out).isEqualTo("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void render_enableThinkingFalseAppendsEmptyThinkBlockAfterGenerationPrompt() {
        String out = encoder.render(ChatInput.of(msgs("[{'role':'user','content':'U'}]"), true, false));
        assertThat(out).endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n");
    }

    @Test
    void render_enableThinkingFalseWithoutGenerationPromptAddsNothing() {
        assertThat(encoder.render(ChatInput.of(msgs("[{'role':'user','content':'U'}]"), false, false)))
                .isEqualTo("<|im_start|>user\nU<|im_end|>\n");
    }

    @Test
    void render_earlierAssistantTurnLosesReasoningButTurnAfterLastQueryKeepsIt() {
        JsonNode m = msgs("[{'role':'user','content':'Q1'},{'role':'assistant','content':'<think>\\nR1\\n</think>\\n\\nA1'},"
                + "{'role':'user','content':'Q2'},{'role':'assistant','content':'<think>R2</think>A2'}]");
        assertThat(encoder.render(ChatInput.of(m, false, true))).isEqualTo(
                "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
                        + "<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n<think>\nR2\n</think>\n\nA2<|im_end|>\n");
    }

    @Test
    void render_reasoningContentFieldWinsOverThinkTagsInContent() {
        JsonNode m = msgs("[{'role':'user','content':'Q'},{'role':'assistant','content':'A','reasoning_content':'\\nR\\n'}]");
        assertThat(encoder.render(ChatInput.of(m, false, true)))
                .isEqualTo("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nR\n</think>\n\nA<|im_end|>\n");
    }

    @Test
    void render_nonLeadingSystemIsRenderedInPlace() {
        JsonNode m = msgs("[{'role':'user','content':'U'},{'role':'system','content':'S'}]");
        assertThat(encoder.render(ChatInput.of(m, false, true))).isEqualTo("<|im_start|>user\nU<|im_end|>\n<|im_start|>system\nS<|im_end|>\n");
    }

    @Test
    void render_consecutiveToolMessagesShareOneUserTurn() {
        JsonNode m = msgs("[{'role':'user','content':'U'},{'role':'tool','content':'T1'},{'role':'tool','content':'T2'}]");
        assertThat(encoder.render(ChatInput.of(m, false, true))).isEqualTo("<|im_start|>user\nU<|im_end|>\n"
                + "<|im_start|>user\n<tool_response>\nT1\n</tool_response>\n<tool_response>\nT2\n</tool_response><|im_end|>\n");
    }

    @Test
    void render_unknownRoleRendersNothing() {
        assertThat(encoder.render(ChatInput.of(msgs("[{'role':'developer','content':'D'},{'role':'user','content':'U'}]"), false, true)))
                .isEqualTo("<|im_start|>user\nU<|im_end|>\n");
    }

    @Test
    void render_declinesWhereJinja2Raises_withTheReasonLabel() {
        // the template does `message.content is string`-free string concatenation on list content: a TypeError
        assertThatThrownBy(() -> encoder.render(ChatInput.of(msgs("[{'role':'user','content':[{'type':'text','text':'x'}]}]"), true, true)))
                .isInstanceOfSatisfying(UnsupportedChatException.class, e -> assertThat(e.reason()).startsWith("template_"));
        assertThatThrownBy(() -> encoder.render(ChatInput.of(msgs("[]"), true, true)))
                .isInstanceOfSatisfying(UnsupportedChatException.class, e -> assertThat(e.reason()).isEqualTo("message_shape"));
    }

    @Test
    void render_assistantToolCallsRenderThroughTojson() {
        String out = encoder.render(ChatInput.of(msgs("[{'role':'user','content':'U'},{'role':'assistant','content':'',"
                + "'tool_calls':[{'function':{'name':'f','arguments':{'a':1}}}]},{'role':'user','content':'V'}]"), true, true));
        assertThat(out).contains("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>");
    }

    @Test
    void encode_tokenizesTheRendering() {
        JsonNode m = msgs("[{'role':'user','content':'U'}]");
        assertThat(encoder.encode(ChatInput.of(m, true, true))).isEqualTo(encoder.render(ChatInput.of(m, true, true)).codePoints().toArray());
    }
}
