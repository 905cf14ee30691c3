package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Tokenizers by model id, loaded once from local directories ({@code tokenizer.json} plus
 * {@code tokenizer_config.json}, optionally {@code chat_template.jinja}) and reused for every request.
 *
 * <p>Invariants: never touches the network (offline mode is forced before DJL loads, see {@link
 * DjlOffline}); tokenizers never truncate, pad or add special tokens; several models sharing one
 * directory share one native tokenizer. A model with no entry still routes, with its input length
 * estimated by {@link RequestTokens#estimateTokens}.
 *
 * <p>Concurrency: the map is immutable after {@link #load}, so {@link #forModel} and the returned
 * tokenizers are safe from any thread without locking. {@link #close} frees the native tokenizers and
 * must only be called once no request uses them any more.
 */
public final class TokenizerRegistry implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, ModelTokenizer> byModel;
    private final List<DjlModelTokenizer> owned;

    private TokenizerRegistry(Map<String, ModelTokenizer> byModel, List<DjlModelTokenizer> owned) {
        this.byModel = Map.copyOf(byModel);
        this.owned = List.copyOf(owned);
    }

    /**
     * Loads one tokenizer per distinct directory (about 1 s for the 11 MB Qwen3 tokenizer.json).
     *
     * @throws IOException naming the model and directory when a tokenizer cannot be loaded; the
     *                     tokenizers loaded so far are closed
     */
    public static TokenizerRegistry load(Map<String, Path> tokenizerDirsByModel) throws IOException {
        DjlOffline.ensure(); // before the first DJL class is touched
        requireNonNull(tokenizerDirsByModel, "tokenizerDirsByModel");
        Map<Path, DjlModelTokenizer> byDir = new HashMap<>();
        Map<String, ModelTokenizer> byModel = new HashMap<>();
        List<DjlModelTokenizer> owned = new ArrayList<>();
        try {
            for (Map.Entry<String, Path> e : tokenizerDirsByModel.entrySet()) {
                String model = requireNonNull(e.getKey(), "model id");
                Path dir = requireNonNull(e.getValue(), "tokenizer dir of " + model).toAbsolutePath().normalize();
                DjlModelTokenizer tok = byDir.get(dir);
                if (tok == null) {
                    tok = loadDir(model, dir);
                    byDir.put(dir, tok);
                    owned.add(tok);
                }
                byModel.put(model, tok);
            }
        } catch (IOException | RuntimeException ex) {
            owned.forEach(DjlModelTokenizer::close);
            throw ex;
        }
        return new TokenizerRegistry(byModel, owned);
    }

    /** A registry with no tokenizers: every model routes on estimated lengths. */
    public static TokenizerRegistry empty() {
        return new TokenizerRegistry(Map.of(), List.of());
    }

    public Optional<ModelTokenizer> forModel(String modelId) {
        return modelId == null ? Optional.empty() : Optional.ofNullable(byModel.get(modelId));
    }

    @Override
    public void close() {
        owned.forEach(DjlModelTokenizer::close);
    }

    private static DjlModelTokenizer loadDir(String model, Path dir) throws IOException {
        Path tokenizerJson = dir.resolve("tokenizer.json");
        if (!Files.isRegularFile(tokenizerJson)) {
            throw new IOException("model " + model + ": no tokenizer.json in " + dir);
        }
        String template = readTemplate(model, dir);
        HuggingFaceTokenizer hf;
        try {
            hf = HuggingFaceTokenizer.builder()
                    .optTokenizerPath(dir)
                    .optAddSpecialTokens(false)
                    .optTruncation(false)
                    .optPadding(false)
                    .optWithOverflowingTokens(false)
                    .build();
        } catch (IOException | RuntimeException ex) {
            throw new IOException("model " + model + ": cannot load tokenizer from " + dir + ": " + ex.getMessage(), ex);
        }
        return new DjlModelTokenizer(hf, template);
    }

    private static String readTemplate(String model, Path dir) throws IOException {
        Path config = dir.resolve("tokenizer_config.json");
        if (Files.isRegularFile(config)) {
            JsonNode node;
            try {
                node = JSON.readTree(config.toFile());
            } catch (IOException ex) {
                throw new IOException("model " + model + ": unreadable " + config + ": " + ex.getMessage(), ex);
            }
            Optional<String> t = ChatTemplates.templateOf(node);
            if (t.isPresent()) {
                return t.get();
            }
        }
        Path jinja = dir.resolve("chat_template.jinja");
        return Files.isRegularFile(jinja) ? Files.readString(jinja) : null;
    }
}
