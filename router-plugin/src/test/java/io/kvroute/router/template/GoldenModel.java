package io.kvroute.router.template;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.TokenizerArchive;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * One golden model of the test resources: its tokenizer ({@code models/<name>}, real tokenizer.json
 * through the project's DJL tokenizer), its chat template and special tokens from tokenizer_config.json,
 * and its golden conversations ({@code golden/<name>.jsonl.gz}, from transformers; see
 * {@code src/test/golden/README.md}).
 */
final class GoldenModel {

    static final List<String> NAMES = List.of("llama3", "llama3_1", "deepseek_v3", "gemma3", "qwen3");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** transformers v5 {@code special_tokens_map}: the non-None values of these, as strings. */
    private static final List<String> SPECIAL = List.of("bos_token", "eos_token", "unk_token", "sep_token",
            "pad_token", "cls_token", "mask_token");
    private static final Map<String, GoldenModel> LOADED = new LinkedHashMap<>();

    /** One golden conversation. */
    record Case(int id, List<Object> messages, List<Object> tools, boolean addGenerationPrompt,
            Map<String, Object> kwargs, String text, int[] ids, int[] tokenizerJsonIds, String error) {

        /** The ids tokenizer.json itself gives for {@link #text}: equal to transformers' except where it diverges. */
        int[] fileIds() {
            return tokenizerJsonIds != null ? tokenizerJsonIds : ids;
        }
    }

    final String name;
    final String template;
    final Map<String, String> specialTokens;
    final Path dir;
    private TokenizerRegistry registry;

    private GoldenModel(String name, String template, Map<String, String> specialTokens, Path dir) {
        this.name = name;
        this.template = template;
        this.specialTokens = specialTokens;
        this.dir = dir;
    }

    static synchronized GoldenModel get(String name) {
        return LOADED.computeIfAbsent(name, GoldenModel::load);
    }

    @SuppressWarnings("unchecked")
    private static GoldenModel load(String name) {
        try {
            Path tmp = Files.createTempDirectory("kvroute-golden-" + name + "-");
            tmp.toFile().deleteOnExit();
            Path dir = TokenizerArchive.materialize(GoldenModel.class.getClassLoader(), "models/" + name, tmp);
            for (String f : List.of("tokenizer.json", "tokenizer_config.json")) {
                dir.resolve(f).toFile().deleteOnExit();
            }
            Map<String, Object> config = JSON.readValue(dir.resolve("tokenizer_config.json").toFile(), Map.class);
            Map<String, String> special = new LinkedHashMap<>();
            for (String key : SPECIAL) {
                String token = tokenText(config.get(key));
                if (token != null) {
                    special.put(key, token);
                }
            }
            if (config.get("extra_special_tokens") instanceof Map<?, ?> extra) {
                extra.forEach((k, v) -> special.put((String) k, tokenText(v)));
            }
            return new GoldenModel(name, (String) config.get("chat_template"), special, dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String tokenText(Object v) {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Map<?, ?> m && m.get("content") instanceof String s) {
            return s;
        }
        return null;
    }

    synchronized ModelTokenizer tokenizer() {
        if (registry == null) {
            try {
                registry = TokenizerRegistry.load(Map.of(name, dir), 0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return registry.forModel(name).orElseThrow();
    }

    @SuppressWarnings("unchecked")
    List<Case> cases() {
        List<Case> out = new ArrayList<>();
        try (InputStream raw = GoldenModel.class.getClassLoader().getResourceAsStream("golden/" + name + ".jsonl.gz");
                BufferedReader in = new BufferedReader(new InputStreamReader(new GZIPInputStream(raw),
                        StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                Map<String, Object> row = JSON.readValue(line, Map.class);
                int[] ids = intArray(row.get("ids"));
                int[] fileIds = intArray(row.get("tokenizer_json_ids"));
                out.add(new Case((Integer) row.get("id"), (List<Object>) row.get("messages"),
                        (List<Object>) row.get("tools"), (Boolean) row.get("add_generation_prompt"),
                        (Map<String, Object>) row.get("kwargs"), (String) row.get("text"), ids,
                        fileIds, (String) row.get("error")));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static int[] intArray(Object v) {
        return v instanceof List<?> l ? l.stream().mapToInt(o -> ((Number) o).intValue()).toArray() : null;
    }

    Map<String, Object> variables(Case c) {
        return ChatTemplate.variables(c.messages(), c.tools(), c.addGenerationPrompt(), specialTokens, c.kwargs());
    }
}
