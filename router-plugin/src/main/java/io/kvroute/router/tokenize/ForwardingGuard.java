package io.kvroute.router.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.router.json.JsonFields;
import java.util.List;

/**
 * Decides whether engine-equivalent ids may replace the engine's own chat rendering, i.e. be
 * forwarded as {@code input_ids}. The rule: forward only when the request is one the native encoder
 * renders exactly AND the engine would not render or rewrite it differently. Anything that changes
 * the prompt on the engine side (tools, custom templates or kwargs, reasoning switches, role rewrites,
 * multimodal parts, continuation of the last message) blocks forwarding; the request is then sent
 * unchanged and routed on the same ids. Follows SGLang router's {@code input_ids_safe_to_forward}
 * (seed 003, REFERENCE.md section 5). Beyond that list, roles other than system/user/assistant (e.g.
 * {@code developer}, which engines may map to system) also block.
 *
 * <p>A field whose value is JSON null counts as absent. Multimodal content wins over other reasons so
 * that the {@code ineligible_multimodal} metric counts every multimodal request. Stateless, thread-safe.
 */
public final class ForwardingGuard {

    public enum Outcome { FORWARD, INELIGIBLE, INELIGIBLE_MULTIMODAL }

    /** Request fields that change how the engine renders or post-processes the prompt. */
    private static final List<String> BLOCKING_FIELDS = List.of(
            "input_ids", "tools", "functions", "chat_template", "chat_template_kwargs",
            "reasoning", "reasoning_effort", "task");

    private ForwardingGuard() {}

    public static Outcome check(JsonNode body) {
        if (body == null || !body.isObject()) {
            return Outcome.INELIGIBLE;
        }
        JsonNode messages = body.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            return Outcome.INELIGIBLE;
        }
        for (JsonNode m : messages) {
            JsonNode content = m.get("content");
            if (content != null && (content.isArray() || content.isObject())) {
                return Outcome.INELIGIBLE_MULTIMODAL;
            }
        }
        for (String field : BLOCKING_FIELDS) {
            if (present(body, field)) {
                return Outcome.INELIGIBLE;
            }
        }
        if (body.path("continue_final_message").asBoolean(false)) {
            return Outcome.INELIGIBLE;
        }
        JsonNode generationPrompt = JsonFields.optional(body, "add_generation_prompt");
        if (generationPrompt != null && !(generationPrompt.isBoolean() && generationPrompt.booleanValue())) {
            // SGLang has no such request field and always renders the generation prompt
            return Outcome.INELIGIBLE;
        }
        String previousRole = null;
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            if (!m.isObject() || !m.path("role").isTextual() || !m.path("content").isTextual()) {
                return Outcome.INELIGIBLE; // missing role, null or non-string content
            }
            if (present(m, "tool_calls") || present(m, "function_call") || present(m, "reasoning_content")) {
                return Outcome.INELIGIBLE;
            }
            String role = m.get("role").asText();
            switch (role) {
                case "system" -> {
                    if (i > 0) {
                        return Outcome.INELIGIBLE;
                    }
                }
                case "user" -> {
                    if ("user".equals(previousRole)) {
                        return Outcome.INELIGIBLE;
                    }
                }
                case "assistant" -> {
                    if (i == messages.size() - 1) {
                        return Outcome.INELIGIBLE; // trailing assistant: the engine continues it
                    }
                }
                default -> {
                    return Outcome.INELIGIBLE; // tool, function, developer, ...
                }
            }
            previousRole = role;
        }
        return Outcome.FORWARD;
    }

    private static boolean present(JsonNode node, String field) {
        return JsonFields.present(node, field);
    }
}
