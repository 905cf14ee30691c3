package io.kvroute.router.tokenize;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.worker.EngineType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The message preprocessing an engine applies before it calls transformers' {@code apply_chat_template},
 * reproduced for the shapes listed here and declined ({@link UnsupportedChatException}) for every other:
 * ids are only engine-equivalent when the router feeds the template what the engine feeds it.
 *
 * <p><b>SGLang</b> ({@code sglang python/sglang/srt/entrypoints/openai/serving_chat.py},
 * {@code OpenAIServingChat._apply_jinja_template} and {@code _handle_last_assistant_message}):
 * <ul>
 *   <li>{@code add_generation_prompt=True} always (the request field is not read);</li>
 *   <li>a null or absent {@code content} becomes {@code ""} (so an assistant turn with {@code tool_calls}
 *       and {@code content: null}, the OpenAI shape, renders instead of raising);</li>
 *   <li>assistant {@code tool_calls[].function.arguments} strings are parsed into JSON objects
 *       ({@code normalize_assistant_tool_call_arguments}); arguments that are not a JSON object are a 400
 *       there, a decline here;</li>
 *   <li>a trailing assistant message becomes {@code {"role": "user", "content": ...}} unless
 *       {@code continue_final_message} (declined here);</li>
 *   <li>{@code reasoning_effort} and {@code chat_template_kwargs} become template kwargs.</li>
 * </ul>
 * Declined: list content (SGLang flattens it by the template's detected content format, in
 * {@code sglang python/sglang/srt/parser/jinja_template_utils.py}, not reproduced), and {@code tools}
 * (SGLang passes its pydantic dump of each tool, with defaults this router does not know).
 * Not reproduced either, and documented in docs/tokenization.md: SGLang renders
 * {@code message.model_dump()}, which carries the protocol's unset optional fields as None; the
 * router renders each message with the keys the client sent.
 *
 * <p><b>vLLM</b> ({@code vllm vllm/entrypoints/chat_utils.py}, {@code _resolve_chat_template_content_format}
 * and {@code _parse_chat_message_content_parts}): a template that loops over {@code message['content']}
 * is detected as the "openai" content format, where vLLM turns string content into a list of parts:
 * declined here. In the "string" format, a list of text parts is joined with {@code "\n"}.
 * {@code add_generation_prompt} is the request's (default true). Declined: null content,
 * {@code tool_calls} and {@code tools} (vLLM rewrites their arguments), {@code continue_final_message}.
 *
 * <p>Stateless and thread-safe.
 */
final class EnginePreprocessing {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** A loop over a message's content, as vLLM's content-format detection looks for it. */
    private static final Pattern LOOPS_OVER_CONTENT = Pattern.compile(
            "for\\s+\\w+\\s+in\\s+\\w+\\s*(\\[\\s*['\"]content['\"]\\s*]|\\.content)");

    /** The template variables' inputs after preprocessing ({@code tools} null when none are passed). */
    record Prepared(List<Object> messages, List<?> tools, boolean addGenerationPrompt) {}

    private final EngineType engine;
    private final boolean openAiContentFormat;

    /** @param engine the target engine, or null for none: transformers' own {@code apply_chat_template} */
    EnginePreprocessing(EngineType engine, String templateSource) {
        this.engine = engine;
        this.openAiContentFormat = LOOPS_OVER_CONTENT.matcher(templateSource).find();
    }

    EngineType engine() {
        return engine;
    }

    /**
     * The preprocessing {@code engine} applies, as reproduced here: vLLM its own; SGLang and TensorRT-LLM
     * SGLang's. Two engines of one kind hand the template the same inputs for every chat.
     */
    static EngineType kindOf(EngineType engine) {
        return engine == EngineType.VLLM ? EngineType.VLLM : EngineType.SGLANG;
    }

    Prepared prepare(ChatInput chat, boolean continueFinalMessage) {
        if (!chat.messages().isArray() || chat.messages().isEmpty()) {
            throw new UnsupportedChatException("message_shape", "messages is not a non-empty array");
        }
        if (continueFinalMessage) {
            throw new UnsupportedChatException("continue_final_message", "continue_final_message is not reproduced");
        }
        if (engine == null) { // the messages and tools exactly as given, as apply_chat_template(messages, tools=...)
            @SuppressWarnings("unchecked")
            List<Object> messages = (List<Object>) JsonValues.plain(chat.messages());
            if (chat.tools() != null && !chat.tools().isArray()) {
                throw new UnsupportedChatException("tools", "tools is not an array");
            }
            return new Prepared(messages, (List<?>) JsonValues.plain(chat.tools()), chat.addGenerationPrompt());
        }
        if (chat.tools() != null) {
            throw new UnsupportedChatException("tools", "the engine's rendering of tools is not reproduced");
        }
        return engine == EngineType.VLLM ? vllm(chat) : sglang(chat);
    }

    private Prepared sglang(ChatInput chat) {
        List<Object> out = new ArrayList<>(chat.messages().size());
        JsonNode messages = chat.messages();
        for (int i = 0; i < messages.size(); i++) {
            Map<String, Object> m = message(messages.get(i), i);
            Object content = m.get("content");
            if (content == null) {
                m.put("content", "");
            } else if (!(content instanceof String)) {
                throw new UnsupportedChatException("content_parts", "messages[" + i + "].content is not a string");
            }
            parseToolCallArguments(m, i);
            out.add(m);
        }
        Map<String, Object> last = cast(out.get(out.size() - 1));
        if ("assistant".equals(last.get("role"))) {
            Map<String, Object> asUser = new LinkedHashMap<>();
            asUser.put("role", "user");
            asUser.put("content", last.get("content"));
            out.set(out.size() - 1, asUser);
        }
        return new Prepared(out, null, true);
    }

    private Prepared vllm(ChatInput chat) {
        if (openAiContentFormat) {
            throw new UnsupportedChatException("vllm_openai_content_format",
                    "vLLM renders this template with list content, not reproduced");
        }
        List<Object> out = new ArrayList<>(chat.messages().size());
        JsonNode messages = chat.messages();
        for (int i = 0; i < messages.size(); i++) {
            Map<String, Object> m = message(messages.get(i), i);
            Object content = m.get("content");
            if (content == null) {
                throw new UnsupportedChatException("null_content", "messages[" + i + "].content is null");
            }
            if (content instanceof List<?> parts) {
                m.put("content", joinTextParts(parts, i));
            } else if (!(content instanceof String)) {
                throw new UnsupportedChatException("content_parts", "messages[" + i + "].content is not a string");
            }
            if (m.get("tool_calls") != null) {
                throw new UnsupportedChatException("tool_calls", "vLLM's rewriting of tool calls is not reproduced");
            }
            out.add(m);
        }
        return new Prepared(out, null, chat.addGenerationPrompt());
    }

    private static String joinTextParts(List<?> parts, int i) {
        StringBuilder sb = new StringBuilder();
        for (Object p : parts) {
            if (!(p instanceof Map<?, ?> part) || !"text".equals(part.get("type")) || !(part.get("text") instanceof String t)) {
                throw new UnsupportedChatException("content_parts", "messages[" + i + "].content has a non-text part");
            }
            if (!sb.isEmpty()) {
                sb.append('\n');
            }
            sb.append(t);
        }
        return sb.toString();
    }

    private static Map<String, Object> message(JsonNode node, int i) {
        if (!node.isObject() || !node.path("role").isTextual()) {
            throw new UnsupportedChatException("message_shape", "messages[" + i + "] has no string role");
        }
        return cast(JsonValues.plain(node));
    }

    private static void parseToolCallArguments(Map<String, Object> m, int i) {
        if (!"assistant".equals(m.get("role")) || !(m.get("tool_calls") instanceof List<?> calls)) {
            return;
        }
        List<Object> parsed = new ArrayList<>(calls.size());
        for (Object call : calls) {
            if (call instanceof Map<?, ?> c && c.get("function") instanceof Map<?, ?> f && f.get("arguments") instanceof String args) {
                Object value;
                try {
                    value = JsonValues.plain(JSON.readTree(args));
                } catch (JsonProcessingException e) {
                    throw new UnsupportedChatException("tool_call_arguments", "messages[" + i + "] tool call arguments are not JSON");
                }
                if (!(value instanceof Map)) {
                    throw new UnsupportedChatException("tool_call_arguments", "messages[" + i + "] tool call arguments are not an object");
                }
                Map<String, Object> function = new LinkedHashMap<>(cast(f));
                function.put("arguments", value);
                Map<String, Object> copy = new LinkedHashMap<>(cast(c));
                copy.put("function", function);
                parsed.add(copy);
            } else {
                parsed.add(call);
            }
        }
        m.put("tool_calls", parsed);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Object o) {
        return (Map<String, Object>) o;
    }
}
