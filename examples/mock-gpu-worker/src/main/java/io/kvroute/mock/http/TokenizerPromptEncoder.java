package io.kvroute.mock.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.RequestTokens;
import java.util.Objects;
import java.util.Optional;

/**
 * The engine's own tokenization with the real tokenizer of a model directory: the same DJL tokenizer
 * and the model's own chat template (after the message preprocessing of the engine it plays: SGLang's, or
 * vLLM's with {@code --engine-api vllm}, see the router's {@code EnginePreprocessing}) as the router, so a Llama 3,
 * Gemma 3, DeepSeek V3 or Qwen3 fleet renders its chats as the router does, and ids the router forwards
 * are exactly what this worker would have computed. Chats the encoder declines fall back to their joined
 * message text (a real engine would render them or answer 400; the router never forwards ids for those).
 */
public final class TokenizerPromptEncoder implements PromptEncoder {

    private final ModelTokenizer tokenizer;

    public TokenizerPromptEncoder(ModelTokenizer tokenizer) {
        this.tokenizer = Objects.requireNonNull(tokenizer, "tokenizer");
    }

    @Override
    public int[] encodeText(String text) {
        return tokenizer.encode(text);
    }

    @Override
    public int[] encodeChat(JsonNode body) {
        return RequestTokens.of(body, Optional.of(tokenizer)).map(RequestTokens::ids).orElse(new int[0]);
    }

    @Override
    public String decode(int tokenId) {
        return StandInTokenizer.text(tokenId);
    }
}
