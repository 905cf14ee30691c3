package io.kvroute.router.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.router.worker.EngineType;
import java.util.Arrays;
import java.util.Optional;

/**
 * The token ids of one request, computed once at ingress and shared by routing and forwarding.
 *
 * <p>{@code engineEquivalent} is true only when the ids come from the model's native chat encoder,
 * i.e. they are what the engine would compute itself from {@code messages}; only such ids may be
 * forwarded as {@code input_ids}, and only when {@link ForwardingGuard} also allows it. Routing-only ids
 * (raw {@code prompt}/{@code text}, or the message texts of a chat the encoder cannot render) are
 * stable for a given prefix, which is all the prefix tree needs. Follows SGLang router's
 * {@code request_tokens_for}.
 *
 * <p>{@code declineReason} is set when a chat had a chat encoder but its rendering was declined
 * (a label of {@link UnsupportedChatException#reason}); the ids are then routing-only.
 *
 * <p>The ids array is shared, not copied: treat it as read-only.
 */
public record RequestTokens(int[] ids, boolean engineEquivalent, String declineReason) {

    /** Tokens with no decline to report. */
    public RequestTokens(int[] ids, boolean engineEquivalent) {
        this(ids, engineEquivalent, null);
    }

    /**
     * Estimated input tokens when the model has no tokenizer: {@code bodyBytes / 4} (a common ~4 bytes
     * per token for English BPE text; JSON framing makes it an over-estimate for short bodies),
     * clamped to {@code [0, Integer.MAX_VALUE]}.
     */
    public static int estimateTokens(long bodyBytes) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, bodyBytes / 4));
    }

    /**
     * Tokens of a parsed request body.
     * <ol>
     *   <li>{@code messages} array and a chat encoder: the chat rendered with the model's template after
     *       the engine's preprocessing ({@link ChatInput#fromBody}), engine-equivalent;</li>
     *   <li>else (no encoder, or messages the encoder cannot render): string contents and text parts of
     *       the messages joined with "\n", routing-only;</li>
     *   <li>else {@code prompt} or {@code text} (a string, or the first of an array of strings), routing-only,
     *       tokenized as the engine tokenizes a text prompt: with the tokenizer's special tokens
     *       ({@link ModelTokenizer#encodeWithSpecialTokens}), unless the body says {@code "add_special_tokens":
     *       false} and {@code engine} honours that field (see {@link #addsSpecialTokens}).</li>
     * </ol>
     *
     * @param engine the engine whose completion tokenization to follow (null = SGLang)
     * @return empty when there is no tokenizer, no usable text, or the text is empty
     */
    public static Optional<RequestTokens> of(JsonNode body, Optional<ModelTokenizer> tok, EngineType engine) {
        if (tok == null || tok.isEmpty() || body == null || !body.isObject()) {
            return Optional.empty();
        }
        ModelTokenizer tokenizer = tok.get();
        JsonNode messages = body.get("messages");
        if (messages != null && messages.isArray() && !messages.isEmpty()) {
            Optional<ChatEncoder> encoder = tokenizer.chatEncoder();
            if (encoder.isPresent()) {
                try {
                    int[] ids = encoder.get().encode(ChatInput.fromBody(body));
                    return Optional.of(new RequestTokens(ids, true));
                } catch (UnsupportedChatException e) {
                    return routingOnly(tokenizer, messagesText(messages), e.reason());
                }
            }
            return routingOnly(tokenizer, messagesText(messages), null);
        }
        String text = rawText(body);
        if (text == null || text.isEmpty()) {
            return Optional.empty();
        }
        int[] ids = addsSpecialTokens(body, engine) ? tokenizer.encodeWithSpecialTokens(text) : tokenizer.encode(text);
        return Optional.of(new RequestTokens(ids, false, null));
    }

    /** As {@link #of(JsonNode, Optional, EngineType)} for an SGLang fleet. */
    public static Optional<RequestTokens> of(JsonNode body, Optional<ModelTokenizer> tok) {
        return of(body, tok, EngineType.SGLANG);
    }

    /**
     * Whether {@code engine} adds the tokenizer's special tokens to this body's text prompt. vLLM reads the
     * request's {@code add_special_tokens} (default true; vllm vllm/entrypoints/openai/completion/protocol.py
     * {@code CompletionRequest}), so a client's explicit {@code false} is followed. SGLang never passes the
     * field on: its completion handler builds a {@code GenerateReqInput} without it (sglang
     * python/sglang/srt/entrypoints/openai/serving_completions.py) and {@code _tokenize_texts} calls the
     * tokenizer with its defaults (sglang python/sglang/srt/managers/tokenizer_manager.py).
     */
    public static boolean addsSpecialTokens(JsonNode body, EngineType engine) {
        if (engine != EngineType.VLLM) {
            return true;
        }
        JsonNode flag = body.get("add_special_tokens");
        return flag == null || !flag.isBoolean() || flag.booleanValue();
    }

    private static Optional<RequestTokens> routingOnly(ModelTokenizer tokenizer, String text, String declineReason) {
        if (text == null || text.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new RequestTokens(tokenizer.encode(text), false, declineReason));
    }

    /**
     * The text prompt of a completion body: {@code prompt}, else {@code text}. A list of strings is a batch that
     * engines run as separate requests, each tokenized on its own with its own special tokens (SGLang
     * {@code TokenizerManager._batch_tokenize_and_process}, sglang python/sglang/srt/managers/tokenizer_manager.py;
     * vLLM one engine input per prompt, vllm vllm/entrypoints/openai/completion/serving.py), so the batch routes
     * on its first prompt, whose ids the engine computes exactly (as a batch of {@code input_ids} routes on its
     * first array). Token-id prompts and mixed arrays carry no text: null.
     */
    private static String rawText(JsonNode body) {
        for (String field : new String[] {"prompt", "text"}) {
            JsonNode value = body.get(field);
            if (value != null && value.isTextual()) {
                return value.asText();
            }
            if (value != null && value.isArray() && !value.isEmpty()) {
                for (JsonNode p : value) {
                    if (!p.isTextual()) {
                        return null;
                    }
                }
                return value.get(0).asText();
            }
        }
        return null;
    }

    private static String messagesText(JsonNode messages) {
        StringBuilder sb = new StringBuilder();
        for (JsonNode m : messages) {
            JsonNode content = m.get("content");
            if (content == null) {
                continue;
            }
            if (content.isTextual()) {
                appendLine(sb, content.asText());
            } else if (content.isArray()) {
                for (JsonNode part : content) {
                    if (part.path("text").isTextual()) {
                        appendLine(sb, part.get("text").asText());
                    }
                }
            }
        }
        return sb.toString();
    }

    private static void appendLine(StringBuilder sb, String s) {
        if (!sb.isEmpty()) {
            sb.append('\n');
        }
        sb.append(s);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RequestTokens r && r.engineEquivalent == engineEquivalent && Arrays.equals(r.ids, ids)
                && java.util.Objects.equals(r.declineReason, declineReason);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(ids) + Boolean.hashCode(engineEquivalent);
    }

    @Override
    public String toString() {
        return "RequestTokens[numIds=" + ids.length + ", engineEquivalent=" + engineEquivalent
                + (declineReason == null ? "" : ", declineReason=" + declineReason) + "]";
    }
}
