package io.kvroute.router.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.router.json.JsonFields;
import java.util.List;

/**
 * Decides whether engine-equivalent ids may replace the engine's own chat rendering, i.e. be
 * forwarded as {@code input_ids}. The rule: forward only when the request is one the chat encoder
 * renders exactly AND the engine would not render or rewrite it differently. Anything that changes
 * the prompt on the engine side (tools, custom templates or kwargs, reasoning switches, role rewrites,
 * multimodal parts, continuation of the last message) blocks forwarding; the request is then sent
 * unchanged and routed on the same ids. Follows SGLang router's {@code input_ids_safe_to_forward}. Beyond that list, roles other than system/user/assistant (e.g.
 * {@code developer}, which engines may map to system) also block.
 *
 * <p>A field whose value is JSON null counts as absent. Multimodal content wins over other reasons so
 * that the {@code ineligible_multimodal} metric counts every multimodal request. Stateless, thread-safe.
 */
public final class ForwardingGuard {

    /** The decision; each refusal has its own metric label ({@link #label}). */
    public enum Outcome {
        FORWARD("forwarded"),
        /** No messages array, a message without a string role. */
        INELIGIBLE("ineligible"),
        INELIGIBLE_MULTIMODAL("ineligible_multimodal"),
        /** The caller sent {@code input_ids} itself. */
        INELIGIBLE_INPUT_IDS("ineligible_input_ids"),
        /** {@code tools}/{@code functions}, a {@code tool} message, assistant {@code tool_calls}/{@code function_call}. */
        INELIGIBLE_TOOLS("ineligible_tools"),
        /** {@code chat_template}, {@code chat_template_kwargs}, {@code reasoning}, {@code reasoning_effort}, {@code task}. */
        INELIGIBLE_TEMPLATE_OVERRIDE("ineligible_template_override"),
        INELIGIBLE_CONTINUE_FINAL_MESSAGE("ineligible_continue_final_message"),
        /** {@code add_generation_prompt} other than true (SGLang always renders the generation prompt). */
        INELIGIBLE_GENERATION_PROMPT("ineligible_generation_prompt"),
        /** A null or non-string content, or a {@code reasoning_content}. */
        INELIGIBLE_CONTENT("ineligible_content"),
        /** A role other than system/user/assistant, a system message after the first, two user turns in a row. */
        INELIGIBLE_ROLE("ineligible_role"),
        /** The last message is the assistant's: the engine continues or rewrites it. */
        INELIGIBLE_TRAILING_ASSISTANT("ineligible_trailing_assistant");

        private final String label;

        Outcome(String label) {
            this.label = label;
        }

        /** The {@code outcome} label of the forwarding metric. */
        public String label() {
            return label;
        }
    }

    /** Request fields that change how the engine renders or post-processes the prompt, by outcome. */
    private static final List<String> TOOL_FIELDS = List.of("tools", "functions");
    private static final List<String> TEMPLATE_FIELDS = List.of(
            "chat_template", "chat_template_kwargs", "reasoning", "reasoning_effort", "task");

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
        if (present(body, "input_ids")) {
            return Outcome.INELIGIBLE_INPUT_IDS;
        }
        for (String field : TOOL_FIELDS) {
            if (present(body, field)) {
                return Outcome.INELIGIBLE_TOOLS;
            }
        }
        for (String field : TEMPLATE_FIELDS) {
            if (present(body, field)) {
                return Outcome.INELIGIBLE_TEMPLATE_OVERRIDE;
            }
        }
        if (body.path("continue_final_message").asBoolean(false)) {
            return Outcome.INELIGIBLE_CONTINUE_FINAL_MESSAGE;
        }
        JsonNode generationPrompt = JsonFields.optional(body, "add_generation_prompt");
        if (generationPrompt != null && !(generationPrompt.isBoolean() && generationPrompt.booleanValue())) {
            // SGLang has no such request field and always renders the generation prompt
            return Outcome.INELIGIBLE_GENERATION_PROMPT;
        }
        String previousRole = null;
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            if (!m.isObject() || !m.path("role").isTextual()) {
                return Outcome.INELIGIBLE; // missing role
            }
            if (present(m, "tool_calls") || present(m, "function_call") || "tool".equals(m.get("role").asText())) {
                return Outcome.INELIGIBLE_TOOLS;
            }
            if (!m.path("content").isTextual() || present(m, "reasoning_content")) {
                return Outcome.INELIGIBLE_CONTENT; // null or non-string content
            }
            String role = m.get("role").asText();
            switch (role) {
                case "system" -> {
                    if (i > 0) {
                        return Outcome.INELIGIBLE_ROLE;
                    }
                }
                case "user" -> {
                    if ("user".equals(previousRole)) {
                        return Outcome.INELIGIBLE_ROLE;
                    }
                }
                case "assistant" -> {
                    if (i == messages.size() - 1) {
                        return Outcome.INELIGIBLE_TRAILING_ASSISTANT; // the engine turns it into a user turn
                    }
                }
                default -> {
                    return Outcome.INELIGIBLE_ROLE; // function, developer, ...
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
