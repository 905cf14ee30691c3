package io.kvroute.router.tokenize;

import java.util.Optional;

/**
 * One model's tokenizer. Implementations are thread-safe: any number of request threads may call
 * {@link #encode} concurrently.
 */
public interface ModelTokenizer {

    /** Token ids of {@code text} exactly as given: no special tokens added, never truncated or padded. */
    int[] encode(String text);

    /** The chat encoder of the model's own chat template, or empty when the model is text-only. */
    Optional<ChatEncoder> chatEncoder();

    /**
     * Why the model is text-only (its chat template uses a construct the renderer does not implement, or
     * it has none): a metric label such as {@code unsupported_filter} or {@code no_template}; empty when
     * it has a chat encoder, or for tokenizers that do not say.
     */
    default Optional<String> textOnlyReason() {
        return Optional.empty();
    }
}
