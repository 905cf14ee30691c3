package io.kvroute.router.tokenize;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Renders OpenAI-style chat {@code messages} to the prompt string the engine would build with its chat
 * template, and tokenizes it. Thread-safe and stateless.
 *
 * <p>Both methods throw {@link UnsupportedChatException} when the messages use a feature the encoder
 * cannot render exactly (the caller then falls back to routing-only tokens).
 */
public interface ChatEncoder {

    /**
     * @param messages            the JSON array of messages
     * @param addGenerationPrompt append the assistant header, as {@code add_generation_prompt}
     * @param enableThinking      {@code false} behaves as the template kwarg {@code enable_thinking=false};
     *                            {@code true} as the kwarg being absent
     */
    String render(JsonNode messages, boolean addGenerationPrompt, boolean enableThinking);

    /** Token ids of {@link #render}; special tokens in the rendering map to their single ids. */
    int[] encode(JsonNode messages, boolean addGenerationPrompt, boolean enableThinking);
}
