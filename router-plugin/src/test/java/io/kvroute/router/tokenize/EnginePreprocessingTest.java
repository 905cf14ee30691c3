package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.worker.EngineType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What each engine does to the messages before its template, and what is declined, with its label. */
class EnginePreprocessingTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String STRING_TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
    private static final String LOOPING_TEMPLATE =
            "{% for m in messages %}{% for part in m['content'] %}{{ part['text'] }}{% endfor %}{% endfor %}";

    private static JsonNode json(String s) {
        try {
            return JSON.readTree(s.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static EnginePreprocessing.Prepared prepare(EngineType engine, String template, ChatInput chat) {
        return new EnginePreprocessing(engine, template).prepare(chat, chat.continueFinalMessage());
    }

    private static String reason(Runnable r) {
        try {
            r.run();
        } catch (UnsupportedChatException e) {
            return e.reason();
        }
        throw new AssertionError("not declined");
    }

    @Test
    void sglang_nullContentBecomesEmpty_andToolCallArgumentsAreParsed() {
        ChatInput chat = ChatInput.of(json("[{'role':'user','content':'Q'},{'role':'assistant','content':null,"
                + "'tool_calls':[{'id':'c1','type':'function','function':{'name':'f','arguments':'{\\'a\\': [1, 2]}'}}]},"
                + "{'role':'user','content':'again'}]".replace("\\'", "\\\"")), true, true);
        EnginePreprocessing.Prepared p = prepare(EngineType.SGLANG, STRING_TEMPLATE, chat);
        @SuppressWarnings("unchecked")
        Map<String, Object> assistant = (Map<String, Object>) p.messages().get(1);
        assertThat(assistant.get("content")).isEqualTo("");
        assertThat(assistant.get("tool_calls")).isEqualTo(List.of(Map.of("id", "c1", "type", "function",
                "function", Map.of("name", "f", "arguments", Map.of("a", List.of(1L, 2L))))));
    }

    @Test
    void sglang_alwaysRendersTheGenerationPrompt_andTurnsATrailingAssistantIntoAUser() {
        ChatInput chat = ChatInput.of(json("[{'role':'user','content':'Q'},{'role':'assistant','content':'A','name':'x'}]"),
                false, true);
        EnginePreprocessing.Prepared p = prepare(EngineType.SGLANG, STRING_TEMPLATE, chat);
        assertThat(p.addGenerationPrompt()).isTrue();
        assertThat(p.messages().get(1)).isEqualTo(Map.of("role", "user", "content", "A"));
        assertThat(p.tools()).isNull();
    }

    @Test
    void sglang_declinesWhatItDoesNotReproduce_eachWithItsLabel() {
        assertThat(reason(() -> prepare(EngineType.SGLANG, STRING_TEMPLATE,
                ChatInput.of(json("[{'role':'user','content':[{'type':'text','text':'x'}]}]"), true, true))))
                .isEqualTo("content_parts");
        assertThat(reason(() -> prepare(EngineType.SGLANG, STRING_TEMPLATE,
                ChatInput.fromBody(json("{'tools':[{'type':'function'}],'messages':[{'role':'user','content':'x'}]}")))))
                .isEqualTo("tools");
        assertThat(reason(() -> prepare(EngineType.SGLANG, STRING_TEMPLATE,
                ChatInput.fromBody(json("{'continue_final_message':true,'messages':[{'role':'user','content':'x'}]}")))))
                .isEqualTo("continue_final_message");
        assertThat(reason(() -> prepare(EngineType.SGLANG, STRING_TEMPLATE, ChatInput.of(json("[{'role':'user','content':'Q'},"
                + "{'role':'assistant','content':'','tool_calls':[{'function':{'name':'f','arguments':'[1]'}}]}]"), true, true))))
                .isEqualTo("tool_call_arguments");
        assertThat(reason(() -> prepare(EngineType.SGLANG, STRING_TEMPLATE, ChatInput.of(json("[{'content':'x'}]"), true, true))))
                .isEqualTo("message_shape");
    }

    @Test
    void vllm_joinsTextPartsWithNewlines_keepsTheRequestedGenerationPrompt() {
        ChatInput chat = ChatInput.of(json("[{'role':'user','content':[{'type':'text','text':'a'},{'type':'text','text':'b'}]},"
                + "{'role':'assistant','content':'A'}]"), false, true);
        EnginePreprocessing.Prepared p = prepare(EngineType.VLLM, STRING_TEMPLATE, chat);
        assertThat(p.messages().get(0)).isEqualTo(Map.of("role", "user", "content", "a\nb"));
        assertThat(p.messages().get(1)).isEqualTo(Map.of("role", "assistant", "content", "A"));
        assertThat(p.addGenerationPrompt()).isFalse();
    }

    @Test
    void vllm_declinesNullContent_toolCalls_andTemplatesOfTheOpenAiContentFormat() {
        assertThat(reason(() -> prepare(EngineType.VLLM, STRING_TEMPLATE,
                ChatInput.of(json("[{'role':'user','content':null}]"), true, true)))).isEqualTo("null_content");
        assertThat(reason(() -> prepare(EngineType.VLLM, STRING_TEMPLATE, ChatInput.of(json("[{'role':'user','content':'Q'},"
                + "{'role':'assistant','content':'','tool_calls':[{'function':{'name':'f','arguments':'{}'}}]}]"), true, true))))
                .isEqualTo("tool_calls");
        assertThat(reason(() -> prepare(EngineType.VLLM, LOOPING_TEMPLATE,
                ChatInput.of(json("[{'role':'user','content':'Q'}]"), true, true)))).isEqualTo("vllm_openai_content_format");
    }

    @Test
    void noEngine_passesMessagesAndToolsAsGiven() {
        ChatInput chat = ChatInput.fromBody(json("{'add_generation_prompt':false,'tools':[{'type':'function'}],"
                + "'messages':[{'role':'user','content':null}]}"));
        EnginePreprocessing.Prepared p = prepare(null, STRING_TEMPLATE, chat);
        Map<String, Object> asSent = new java.util.LinkedHashMap<>();
        asSent.put("role", "user");
        asSent.put("content", null); // None, as json.loads gives it: transformers' template sees None, not ""
        assertThat(p.messages().get(0)).isEqualTo(asSent);
        assertThat(p.tools()).isEqualTo(List.of(Map.of("type", "function")));
        assertThat(p.addGenerationPrompt()).isFalse();
    }
}
