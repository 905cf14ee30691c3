package io.kvroute.router.tokenize;

import java.util.Optional;

/**
 * One model's tokenizer. Implementations are thread-safe: any number of request threads may call
 * {@link #encode} concurrently.
 */
public interface ModelTokenizer {

    /** Token ids of {@code text} exactly as given: no special tokens added, never truncated or padded. */
    int[] encode(String text);

    /** The native chat encoder when the model's chat template is recognised, else empty. */
    Optional<ChatEncoder> chatEncoder();
}
