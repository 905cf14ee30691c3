package io.kvroute.router.tokenize;

import io.kvroute.router.worker.EngineType;
import java.util.Optional;

/**
 * Renders an OpenAI-style chat to the prompt string the engine builds with the model's chat template,
 * after the engine's own message preprocessing, and tokenizes it. Thread-safe and stateless.
 *
 * <p>Both methods throw {@link UnsupportedChatException} (with a metric label) when the renderer cannot
 * prove its output equal to the engine's, or the engine's template would raise; the caller then falls
 * back to routing-only tokens and never forwards ids.
 */
public interface ChatEncoder {

    String render(ChatInput chat);

    /** Token ids of {@link #render}; special tokens in the rendering map to their single ids. */
    int[] encode(ChatInput chat);

    /**
     * The prompt as workers of {@code engine} render {@code chat}, when that engine's message preprocessing
     * hands the template other inputs than {@link #render} used (a mixed fleet: SGLang turns a trailing
     * assistant turn into a user turn and always adds the generation prompt, vLLM keeps both as sent);
     * empty when it hands it the same inputs, so {@link #render}'s prompt is theirs too.
     *
     * @throws UnsupportedChatException when that engine's preprocessing of this chat is not reproduced, or
     *     the template raises on it
     */
    default Optional<String> renderFor(EngineType engine, ChatInput chat) {
        return Optional.empty();
    }

    /** Token ids of {@link #renderFor}, or empty when {@link #encode}'s ids are that engine's too. */
    default Optional<int[]> encodeFor(EngineType engine, ChatInput chat) {
        return Optional.empty();
    }
}
