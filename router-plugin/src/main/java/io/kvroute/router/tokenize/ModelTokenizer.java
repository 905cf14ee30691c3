package io.kvroute.router.tokenize;

import java.util.Optional;

/**
 * One model's tokenizer. Implementations are thread-safe: any number of request threads may call
 * {@link #encode} concurrently.
 */
public interface ModelTokenizer {

    /** Token ids of {@code text} exactly as given: no special tokens added, never truncated or padded. */
    int[] encode(String text);

    /**
     * Token ids of a completion prompt ({@code /v1/completions} {@code prompt}, SGLang {@code /generate}
     * {@code text}) as the engine computes them: with the special tokens the tokenizer's post-processor adds
     * (Llama 3.1 and Gemma 3 prepend their BOS token; Qwen3 adds none), never truncated or padded. Engines
     * tokenize a text prompt with HF's default {@code add_special_tokens=True}: SGLang's
     * {@code TokenizerManager._tokenize_texts} calls {@code self.tokenizer(texts)} (sglang
     * python/sglang/srt/managers/tokenizer_manager.py), vLLM's {@code CompletionRequest.add_special_tokens}
     * defaults to true (vllm vllm/entrypoints/openai/completion/protocol.py). Chat templates write their own
     * BOS, so chats use {@link #encode}.
     *
     * <p>The default is {@link #encode}: right for a tokenizer that adds no special tokens, wrong for one that
     * does; implementations that know their post-processor override it.
     */
    default int[] encodeWithSpecialTokens(String text) {
        return encode(text);
    }

    /**
     * Why no engine computes this tokenizer's ids for any text, so none may reach the exact KV index: a label
     * such as {@code tokenizer_class_rebuilt} (transformers 5 rebuilds DeepSeek V3's {@code LlamaTokenizerFast}
     * from its own definition instead of the tokenizer.json, see {@code ModelChatConfig}); empty when they are
     * the engine's, or for tokenizers that do not say.
     */
    default Optional<String> idsUntrustedReason() {
        return Optional.empty();
    }

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
