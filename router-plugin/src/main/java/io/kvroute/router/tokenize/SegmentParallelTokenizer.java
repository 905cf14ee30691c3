package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.worker.EngineType;
import java.util.Optional;
import java.util.function.Function;

/**
 * One model's tokenizer whose chat encoder renders as the wrapped one does and tokenizes the prompt in
 * parts on several threads ({@link SegmentParallelEncoder}), for a router without the chat prefix cache.
 * Its ids equal the wrapped encoder's. Raw-text encoding is untouched. Thread-safe when the wrapped
 * tokenizer is.
 */
final class SegmentParallelTokenizer implements ModelTokenizer {

    private final ModelTokenizer tokenizer;
    private final Optional<ChatEncoder> chatEncoder;

    SegmentParallelTokenizer(ModelTokenizer tokenizer, Function<String, int[]> segmentEncoder) {
        this.tokenizer = requireNonNull(tokenizer, "tokenizer");
        ChatEncoder base = tokenizer.chatEncoder().orElseThrow();
        this.chatEncoder = Optional.of(new ChatEncoder() {
            @Override
            public String render(ChatInput chat) {
                return base.render(chat);
            }

            @Override
            public int[] encode(ChatInput chat) {
                return segmentEncoder.apply(base.render(chat));
            }

            @Override
            public Optional<String> renderFor(EngineType engine, ChatInput chat) {
                return base.renderFor(engine, chat);
            }

            @Override
            public Optional<int[]> encodeFor(EngineType engine, ChatInput chat) {
                return base.renderFor(engine, chat).map(segmentEncoder);
            }
        });
    }

    @Override
    public int[] encode(String text) {
        return tokenizer.encode(text);
    }

    @Override
    public int[] encodeWithSpecialTokens(String text) {
        return tokenizer.encodeWithSpecialTokens(text);
    }

    @Override
    public Optional<String> idsUntrustedReason() {
        return tokenizer.idsUntrustedReason();
    }

    @Override
    public Optional<ChatEncoder> chatEncoder() {
        return chatEncoder;
    }

    @Override
    public Optional<String> textOnlyReason() {
        return tokenizer.textOnlyReason();
    }
}
