package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * Unpacks a gzipped tokenizer shipped as class-path resources ({@code <dir>/tokenizer.json.gz},
 * {@code <dir>/tokenizer_config.json.gz}) into a directory that {@link TokenizerRegistry#load} can
 * read. Each file is written to a temporary sibling and moved into place, so concurrent callers
 * targeting the same directory never see a half-written file.
 */
public final class TokenizerArchive {

    static final List<String> FILES = List.of("tokenizer.json", "tokenizer_config.json");

    private TokenizerArchive() {}

    /**
     * @param resourceDir class-path directory such as {@code models/qwen3} (leading/trailing '/' ignored)
     * @return {@code targetDir}, now holding {@code tokenizer.json} and {@code tokenizer_config.json}
     * @throws FileNotFoundException naming the missing resource
     */
    public static Path materialize(ClassLoader cl, String resourceDir, Path targetDir) throws IOException {
        requireNonNull(cl, "cl");
        requireNonNull(targetDir, "targetDir");
        String dir = requireNonNull(resourceDir, "resourceDir").replaceAll("^/+|/+$", "");
        Files.createDirectories(targetDir);
        for (String name : FILES) {
            String resource = (dir.isEmpty() ? "" : dir + "/") + name + ".gz";
            try (InputStream raw = cl.getResourceAsStream(resource)) {
                if (raw == null) {
                    throw new FileNotFoundException("class-path resource " + resource + " not found");
                }
                Path tmp = Files.createTempFile(targetDir, name, ".part");
                try (InputStream in = new GZIPInputStream(raw, 1 << 16)) {
                    Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                    Files.move(tmp, targetDir.resolve(name), StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.ATOMIC_MOVE);
                } finally {
                    Files.deleteIfExists(tmp);
                }
            }
        }
        return targetDir;
    }
}
