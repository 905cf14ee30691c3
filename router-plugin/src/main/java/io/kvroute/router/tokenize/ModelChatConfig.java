package io.kvroute.router.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a model directory says about chat rendering, read as transformers 5 reads it
 * ({@code transformers src/transformers/tokenization_utils_base.py}):
 * <ul>
 *   <li>the template: {@code chat_template.jinja} when present (an independent template file takes
 *       priority), else {@code tokenizer_config.json}'s {@code chat_template}, a string or a list of
 *       named templates of which {@code default} is used;</li>
 *   <li>whether the list also names a {@code tool_use} template (transformers picks it when tools are
 *       passed, so such chats are declined here);</li>
 *   <li>the special tokens the template sees as variables: the non-null {@code bos_token},
 *       {@code eos_token}, {@code unk_token}, {@code sep_token}, {@code pad_token}, {@code cls_token},
 *       {@code mask_token} (a string or an added-token object's {@code content}) and the named
 *       {@code extra_special_tokens}. A missing token is undefined, not None.</li>
 *   <li>whether the engine's transformers would tokenize as {@code tokenizer.json} does: a
 *       {@code tokenizer_class} of {@code LlamaTokenizer(Fast)} over a byte-level {@code tokenizer.json}
 *       (DeepSeek V3's files) is rebuilt by transformers 5 as its own Llama tokenizer, whose ids differ
 *       from the file's in almost every golden case; such a model's chat ids are never engine-equivalent
 *       ({@code idsUntrustedReason = "tokenizer_class_rebuilt"}).</li>
 * </ul>
 * Immutable.
 */
record ModelChatConfig(String templateOrNull, boolean hasToolUseTemplate, Map<String, String> specialTokens,
        String idsUntrustedReason) {

    ModelChatConfig(String templateOrNull, boolean hasToolUseTemplate, Map<String, String> specialTokens) {
        this(templateOrNull, hasToolUseTemplate, specialTokens, null);
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> SPECIAL = List.of("bos_token", "eos_token", "unk_token", "sep_token",
            "pad_token", "cls_token", "mask_token");

    ModelChatConfig {
        specialTokens = Map.copyOf(specialTokens);
    }

    static ModelChatConfig read(String model, Path dir) throws IOException {
        Path config = dir.resolve("tokenizer_config.json");
        JsonNode node = null;
        if (Files.isRegularFile(config)) {
            try {
                node = JSON.readTree(config.toFile());
            } catch (IOException ex) {
                throw new IOException("model " + model + ": unreadable " + config + ": " + ex.getMessage(), ex);
            }
        }
        Path jinja = dir.resolve("chat_template.jinja");
        String template = Files.isRegularFile(jinja) ? Files.readString(jinja) : templateOf(node, "default");
        boolean toolUse = !Files.isRegularFile(jinja) && templateOf(node, "tool_use") != null
                && node.path("chat_template").isArray();
        String untrusted = null;
        String tokenizerClass = node == null ? "" : node.path("tokenizer_class").asText("");
        if (tokenizerClass.startsWith("LlamaTokenizer") && byteLevel(dir.resolve("tokenizer.json"))) {
            untrusted = "tokenizer_class_rebuilt";
        }
        return new ModelChatConfig(template, toolUse, specialTokens(node), untrusted);
    }

    /** Whether the {@code pre_tokenizer} of a tokenizer.json is (or contains) ByteLevel; streams past the vocabulary-free head. */
    static boolean byteLevel(Path tokenizerJson) throws IOException {
        if (!Files.isRegularFile(tokenizerJson)) {
            return false;
        }
        try (com.fasterxml.jackson.core.JsonParser p = JSON.getFactory().createParser(tokenizerJson.toFile())) {
            if (p.nextToken() != com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                return false;
            }
            while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                if ("pre_tokenizer".equals(field)) {
                    return JSON.readTree(p).toString().contains("\"ByteLevel\"");
                }
                p.skipChildren();
            }
        }
        return false;
    }

    /** The template text: a string {@code chat_template}, or the entry named {@code name} of a list. */
    static String templateOf(JsonNode tokenizerConfig, String name) {
        JsonNode t = tokenizerConfig == null ? null : tokenizerConfig.get("chat_template");
        if (t == null || t.isNull()) {
            return null;
        }
        if (t.isTextual()) {
            return "default".equals(name) ? t.asText() : null;
        }
        if (t.isArray()) {
            for (JsonNode named : t) {
                if (name.equals(named.path("name").asText()) && named.path("template").isTextual()) {
                    return named.get("template").asText();
                }
            }
        }
        return null;
    }

    static Map<String, String> specialTokens(JsonNode config) {
        Map<String, String> out = new LinkedHashMap<>();
        if (config == null) {
            return out;
        }
        for (String key : SPECIAL) {
            String token = tokenText(config.get(key));
            if (token != null) {
                out.put(key, token);
            }
        }
        JsonNode extra = config.get("extra_special_tokens");
        if (extra != null && extra.isObject()) {
            extra.fields().forEachRemaining(e -> {
                String token = tokenText(e.getValue());
                if (token != null) {
                    out.put(e.getKey(), token);
                }
            });
        }
        return out;
    }

    private static String tokenText(JsonNode v) {
        if (v == null) {
            return null;
        }
        if (v.isTextual()) {
            return v.textValue();
        }
        JsonNode content = v.get("content");
        return content != null && content.isTextual() ? content.textValue() : null;
    }
}
