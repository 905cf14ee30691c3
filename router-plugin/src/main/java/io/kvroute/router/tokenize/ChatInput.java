package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * What a chat request gives the template, before the engine's own preprocessing: the JSON
 * {@code messages}, the {@code tools} (null when absent or JSON null), {@code add_generation_prompt} as
 * the client asked it (default true) and the template kwargs ({@code chat_template_kwargs}, plus
 * {@code reasoning_effort} as SGLang passes it) and {@code continue_final_message}. Immutable; the JSON nodes are only read.
 */
public record ChatInput(JsonNode messages, JsonNode tools, boolean addGenerationPrompt, Map<String, Object> kwargs,
        boolean continueFinalMessage) {

    public ChatInput {
        requireNonNull(messages, "messages");
        kwargs = Map.copyOf(requireNonNull(kwargs, "kwargs"));
        if (tools != null && tools.isNull()) {
            tools = null;
        }
    }

    /**
     * A chat without tools.
     *
     * @param enableThinking {@code false} passes the kwarg {@code enable_thinking=false}; {@code true}
     *     passes no kwarg (the templates' default)
     */
    public static ChatInput of(JsonNode messages, boolean addGenerationPrompt, boolean enableThinking) {
        return new ChatInput(messages, null, addGenerationPrompt,
                enableThinking ? Map.of() : Map.of("enable_thinking", false), false);
    }

    /** The chat of a parsed request body (its {@code messages} must be an array). */
    public static ChatInput fromBody(JsonNode body) {
        JsonNode agp = body.get("add_generation_prompt");
        boolean addGenerationPrompt = agp == null || !agp.isBoolean() || agp.booleanValue();
        java.util.LinkedHashMap<String, Object> kwargs = new java.util.LinkedHashMap<>();
        JsonNode effort = body.get("reasoning_effort");
        if (effort != null && effort.isTextual()) {
            kwargs.put("reasoning_effort", effort.textValue());
        }
        JsonNode ctk = body.get("chat_template_kwargs");
        if (ctk != null && ctk.isObject()) {
            ctk.fields().forEachRemaining(e -> kwargs.put(e.getKey(), JsonValues.plain(e.getValue())));
        }
        kwargs.values().removeIf(java.util.Objects::isNull); // Map.copyOf refuses nulls; a null kwarg is jinja2 None
        return new ChatInput(body.get("messages"), body.get("tools"), addGenerationPrompt, kwargs,
                body.path("continue_final_message").asBoolean(false));
    }
}
