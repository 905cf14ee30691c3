package io.kvroute.router.tokenize;

import io.kvroute.router.worker.EngineType;
import java.util.Optional;
import java.util.function.Function;

/**
 * One model's tokenizer whose chat encoder renders as the wrapped one does and tokenizes the prompt in
 * parts on several threads ({@link SegmentParallelEncoder}), for a router without the chat prefix cache.
 * Its ids equal the wrapped encoder's. Raw-text encoding is untouched. Thread-safe when the wrapped
 * tokenizer is.
 */
final class SegmentParallelTokenizer extends ChatEncoderOverride {

    private final Optional<ChatEncoder> chatEncoder;

    SegmentParallelTokenizer(ModelTokenizer tokenizer, Function<String, int[]> segmentEncoder) {
        super(tokenizer);
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
    public Optional<ChatEncoder> chatEncoder() {
        return chatEncoder;
    }

}
