package io.kvroute.mock.http;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Turns prompts into token ids and output ids into text, the way the engine's tokenizer would.
 * The stand-in is the default; the ingress-tokenization work plugs the real tokenizer in.
 */
public interface PromptEncoder {

    int[] encodeText(String text);

    /**
     * A text prompt ({@code /v1/completions} {@code prompt}, {@code /generate} {@code text}) of {@code body} as the
     * engine tokenizes it: with the tokenizer's special tokens unless the engine follows the body's
     * {@code add_special_tokens: false}. The stand-in has no special tokens: {@link #encodeText}.
     */
    default int[] encodePrompt(String text, JsonNode body) {
        return encodeText(text);
    }

    /** Renders {@code body.messages} with the chat template (honouring the body's kwargs) and encodes it. */
    int[] encodeChat(JsonNode body);

    String decode(int tokenId);

    /** The deterministic stand-in: ~4 bytes per token, ChatML layout for chat. */
    static PromptEncoder standIn() {
        return new PromptEncoder() {
            @Override
            public int[] encodeText(String text) {
                return StandInTokenizer.encode(text);
            }

            @Override
            public int[] encodeChat(JsonNode body) {
                return StandInTokenizer.encode(StandInTokenizer.renderChat(body.get("messages")));
            }

            @Override
            public String decode(int tokenId) {
                return StandInTokenizer.text(tokenId);
            }
        };
    }
}
