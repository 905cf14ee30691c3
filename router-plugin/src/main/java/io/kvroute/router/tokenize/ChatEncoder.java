package io.kvroute.router.tokenize;

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
}
