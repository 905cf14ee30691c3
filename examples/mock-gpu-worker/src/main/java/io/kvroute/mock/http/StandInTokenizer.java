package io.kvroute.mock.http;

import java.nio.charset.StandardCharsets;

/**
 * A deterministic, prefix-preserving stand-in for a real tokenizer: one token per 4 UTF-8 bytes of
 * text, each id a hash of its 4-byte chunk. Two texts sharing a prefix share the ids of every whole
 * chunk in it, which is what the prefix cache needs. Used when no real tokenizer is configured.
 */
final class StandInTokenizer {

    /** Bytes per token: bounds the id count to about bytes / 4, like English BPE. */
    static final int BYTES_PER_TOKEN = 4;

    private static final String[] WORDS = {
        "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
        "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
        "you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more",
        "when", "will", "would", "who", "so", "no", "cache", "token", "route", "prefix", "decode", "fill",
        "queue", "batch", "model", "fleet", "worker", "engine", "stream", "load", "page", "radix"
    };

    private StandInTokenizer() {}

    static int[] encode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] ids = new int[(bytes.length + BYTES_PER_TOKEN - 1) / BYTES_PER_TOKEN];
        for (int t = 0; t < ids.length; t++) {
            int h = 0x811c9dc5;
            int end = Math.min(bytes.length, (t + 1) * BYTES_PER_TOKEN);
            for (int i = t * BYTES_PER_TOKEN; i < end; i++) {
                h = (h ^ (bytes[i] & 0xff)) * 0x01000193;
            }
            ids[t] = 100 + Math.floorMod(h, 150_000);
        }
        return ids;
    }

    /** Renders chat messages as ChatML, the layout the Qwen family's template produces. */
    static String renderChat(com.fasterxml.jackson.databind.JsonNode messages) {
        StringBuilder out = new StringBuilder();
        for (com.fasterxml.jackson.databind.JsonNode message : messages) {
            out.append("<|im_start|>").append(message.path("role").asText()).append('\n');
            com.fasterxml.jackson.databind.JsonNode content = message.get("content");
            out.append(content == null || content.isNull() ? "" : content.isTextual() ? content.asText() : content.toString());
            out.append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }

    /** The text of an output token. */
    static String text(int tokenId) {
        return " " + WORDS[Math.floorMod(tokenId, WORDS.length)];
    }
}
