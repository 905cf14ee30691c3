package io.kvroute.mock.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.RequestTokens;
import io.kvroute.router.worker.EngineType;
import java.util.Objects;
import java.util.Optional;

/**
 * The engine's own tokenization with the real tokenizer of a model directory: the same DJL tokenizer
 * and the model's own chat template (after the message preprocessing of the engine it plays: SGLang's, or
 * vLLM's with {@code --engine-api vllm}, see the router's {@code EnginePreprocessing}) as the router, so a Llama 3,
 * Gemma 3, DeepSeek V3 or Qwen3 fleet renders its chats as the router does, and ids the router forwards
 * are exactly what this worker would have computed. Chats the encoder declines fall back to their joined
 * message text (a real engine would render them or answer 400; the router never forwards ids for those).
 *
 * <p>A text prompt is tokenized as the engine does it, with the tokenizer's special tokens (a Llama 3.1 or
 * Gemma 3 BOS): SGLang's {@code TokenizerManager._tokenize_texts} calls {@code self.tokenizer(texts)} with HF's
 * default {@code add_special_tokens=True} (sglang python/sglang/srt/managers/tokenizer_manager.py), and vLLM's
 * {@code CompletionRequest.add_special_tokens} defaults to true and is followed when a client sets it false
 * (vllm vllm/entrypoints/openai/completion/protocol.py); see {@link RequestTokens#addsSpecialTokens}.
 */
public final class TokenizerPromptEncoder implements PromptEncoder {

    private final ModelTokenizer tokenizer;
    private final EngineType engine;

    /** As an SGLang engine tokenizes. */
    public TokenizerPromptEncoder(ModelTokenizer tokenizer) {
        this(tokenizer, EngineType.SGLANG);
    }

    /** As {@code engine} tokenizes text prompts (SGLang, or vLLM with {@code --engine-api vllm}). */
    public TokenizerPromptEncoder(ModelTokenizer tokenizer, EngineType engine) {
        this.tokenizer = Objects.requireNonNull(tokenizer, "tokenizer");
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    @Override
    public int[] encodeText(String text) {
        return tokenizer.encode(text);
    }

    @Override
    public int[] encodePrompt(String text, JsonNode body) {
        return RequestTokens.addsSpecialTokens(body, engine) ? tokenizer.encodeWithSpecialTokens(text) : tokenizer.encode(text);
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
