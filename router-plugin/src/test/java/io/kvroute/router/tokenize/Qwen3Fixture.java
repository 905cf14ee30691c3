package io.kvroute.router.tokenize;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The real Qwen3 tokenizer (test resources {@code models/qwen3}, see its NOTICE.md), unpacked into a
 * temp dir and loaded once per test JVM: loading the 11 MB tokenizer.json takes about a second.
 */
final class Qwen3Fixture {

    static final String MODEL = "Qwen/Qwen3-8B";
    static final String RESOURCE_DIR = "models/qwen3";

    private static Path dir;
    private static TokenizerRegistry registry;

    private Qwen3Fixture() {}

    static synchronized Path dir() {
        if (dir == null) {
            try {
                Path tmp = Files.createTempDirectory("kvroute-qwen3-");
                dir = TokenizerArchive.materialize(Qwen3Fixture.class.getClassLoader(), RESOURCE_DIR, tmp);
                for (String f : TokenizerArchive.FILES) {
                    dir.resolve(f).toFile().deleteOnExit();
                }
                tmp.toFile().deleteOnExit();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return dir;
    }

    static synchronized TokenizerRegistry registry() {
        if (registry == null) {
            try {
                registry = TokenizerRegistry.load(Map.of(MODEL, dir()), 16L << 20); // as the router: chat through the prefix cache
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return registry;
    }

    static ModelTokenizer tokenizer() {
        return registry().forModel(MODEL).orElseThrow();
    }

    /** The DJL tokenizer behind the cached view the router uses. */
    static DjlModelTokenizer djl() {
        return (DjlModelTokenizer) ((PrefixCachedTokenizer) tokenizer()).delegate();
    }

    /**
     * The Qwen3 template with no engine preprocessing (transformers' {@code apply_chat_template} alone), over
     * {@code textEncoder}.
     */
    static ChatEncoder plainEncoder(java.util.function.Function<String, int[]> textEncoder) {
        try {
            TemplateChatEncoder.Loaded loaded = TemplateChatEncoder.compile(ModelChatConfig.read(MODEL, dir()), null,
                    textEncoder, java.time.InstantSource.fixed(java.time.Instant.parse("2026-12-02T12:00:00Z")));
            return ((TemplateChatEncoder.Ready) loaded).encoder();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static ChatEncoder chatEncoder() {
        return tokenizer().chatEncoder().orElseThrow(() -> new AssertionError("Qwen3 template not recognised"));
    }
}
