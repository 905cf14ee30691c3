package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * Another tokenizer with its chat encoder replaced (the chat prefix cache, segment-parallel encoding):
 * every other method is the wrapped tokenizer's, forwarded here once, so a method added to
 * {@link ModelTokenizer} cannot fall back to its default in one decorator and not the other (as
 * {@link ModelTokenizer#encodeWithSpecialTokens} would, dropping a BOS token). Thread-safe when the
 * wrapped tokenizer and the chat encoder are.
 */
abstract class ChatEncoderOverride implements ModelTokenizer {

    final ModelTokenizer tokenizer;

    ChatEncoderOverride(ModelTokenizer tokenizer) {
        this.tokenizer = requireNonNull(tokenizer, "tokenizer");
    }

    @Override
    public final int[] encode(String text) {
        return tokenizer.encode(text);
    }

    @Override
    public final int[] encodeWithSpecialTokens(String text) {
        return tokenizer.encodeWithSpecialTokens(text);
    }

    @Override
    public final Optional<String> idsUntrustedReason() {
        return tokenizer.idsUntrustedReason();
    }

    @Override
    public final Optional<String> textOnlyReason() {
        return tokenizer.textOnlyReason();
    }
}
