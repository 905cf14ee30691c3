package io.kvroute.mock;

import io.kvroute.router.tokenize.TokenizerArchive;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The real Qwen3 tokenizer shipped gzipped inside this jar (origin and licence in
 * router-plugin/src/test/resources/models/qwen3/NOTICE.md). {@code bundled:qwen3} as a tokenizer
 * path unpacks it once per JVM into a temporary directory; nothing is downloaded.
 */
public final class BundledTokenizer {

    public static final String PREFIX = "bundled:";
    private static volatile Path qwen3;

    private BundledTokenizer() {}

    /** Resolves {@code bundled:qwen3} to an unpacked directory; any other value is returned as is. */
    public static String resolve(String path) {
        if (path == null || !path.startsWith(PREFIX)) {
            return path;
        }
        String name = path.substring(PREFIX.length());
        if (!name.equals("qwen3")) {
            throw new IllegalArgumentException("unknown bundled tokenizer '" + name + "' (available: qwen3)");
        }
        return qwen3().toString();
    }

    /** The unpacked Qwen3 tokenizer directory. */
    public static synchronized Path qwen3() {
        if (qwen3 == null) {
            try {
                Path dir = Files.createTempDirectory("kvroute-qwen3-");
                dir.toFile().deleteOnExit();
                qwen3 = TokenizerArchive.materialize(BundledTokenizer.class.getClassLoader(), "io/kvroute/mock/models/qwen3", dir);
                qwen3.resolve("tokenizer.json").toFile().deleteOnExit();
                qwen3.resolve("tokenizer_config.json").toFile().deleteOnExit();
            } catch (IOException e) {
                throw new UncheckedIOException("could not unpack the bundled Qwen3 tokenizer", e);
            }
        }
        return qwen3;
    }
}
