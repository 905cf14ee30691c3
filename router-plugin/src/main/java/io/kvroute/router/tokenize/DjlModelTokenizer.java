package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.util.Optional;

/**
 * A DJL HuggingFace tokenizer with truncation, padding and implicit special tokens switched off.
 * Thread-safe: the native HF tokenizer encodes through a shared immutable handle (checked by
 * {@code TokenizerRegistryTest} with 8 concurrent threads).
 */
final class DjlModelTokenizer implements ModelTokenizer, AutoCloseable {

    private final HuggingFaceTokenizer tokenizer;
    private final Optional<ChatEncoder> chatEncoder;

    DjlModelTokenizer(HuggingFaceTokenizer tokenizer, String chatTemplateOrNull) {
        this.tokenizer = requireNonNull(tokenizer, "tokenizer");
        this.chatEncoder = ChatTemplates.encoderFor(chatTemplateOrNull, this::encode);
    }

    @Override
    public int[] encode(String text) {
        requireNonNull(text, "text");
        long[] ids = tokenizer.encode(text, false, false).getIds();
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    @Override
    public Optional<ChatEncoder> chatEncoder() {
        return chatEncoder;
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
