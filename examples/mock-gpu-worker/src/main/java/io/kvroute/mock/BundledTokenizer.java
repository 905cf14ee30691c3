package io.kvroute.mock;

import io.kvroute.router.tokenize.TokenizerArchive;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The real tokenizers (tokenizer.json and tokenizer_config.json with the chat template) shipped
 * gzipped inside this jar: Qwen3, Llama 3, Llama 3.1, DeepSeek V3 and Gemma 3 (origin and licence of
 * each in router-plugin/src/test/resources/models/NAME/NOTICE.md). {@code bundled:NAME} as a
 * tokenizer path unpacks that model once per JVM into a temporary directory; nothing is downloaded.
 */
public final class BundledTokenizer {

    public static final String PREFIX = "bundled:";
    /** The bundled models, by the name after {@link #PREFIX}. */
    public static final List<String> NAMES = List.of("qwen3", "llama3", "llama3_1", "deepseek_v3", "gemma3");
    private static final Map<String, Path> UNPACKED = new ConcurrentHashMap<>();

    private BundledTokenizer() {}

    /** Resolves {@code bundled:NAME} to an unpacked directory; any other value is returned as is. */
    public static String resolve(String path) {
        if (path == null || !path.startsWith(PREFIX)) {
            return path;
        }
        return of(path.substring(PREFIX.length())).toString();
    }

    /** The unpacked Qwen3 tokenizer directory. */
    public static Path qwen3() {
        return of("qwen3");
    }

    /** The unpacked directory of bundled model {@code name} (one of {@link #NAMES}). */
    public static Path of(String name) {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown bundled tokenizer '" + name + "' (available: "
                    + String.join(", ", NAMES) + ")");
        }
        return UNPACKED.computeIfAbsent(name, BundledTokenizer::unpack);
    }

    private static Path unpack(String name) {
        try {
            Path dir = Files.createTempDirectory("kvroute-" + name + "-");
            dir.toFile().deleteOnExit();
            Path unpacked = TokenizerArchive.materialize(BundledTokenizer.class.getClassLoader(),
                    "io/kvroute/mock/models/" + name, dir);
            unpacked.resolve("tokenizer.json").toFile().deleteOnExit();
            unpacked.resolve("tokenizer_config.json").toFile().deleteOnExit();
            return unpacked;
        } catch (IOException e) {
            throw new UncheckedIOException("could not unpack the bundled " + name + " tokenizer", e);
        }
    }
}
