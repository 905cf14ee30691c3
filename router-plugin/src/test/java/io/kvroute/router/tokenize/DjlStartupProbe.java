package io.kvroute.router.tokenize;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Child-JVM entry point for {@link DjlCpuOnlyTest}: loads the real Qwen3 tokenizer the way the router
 * does (fresh JVM, so DJL initialises here), encodes one string, then prints the native libraries
 * mapped into this process, one per line, after a marker.
 */
public final class DjlStartupProbe {
    private DjlStartupProbe() {}

    public static void main(String[] args) throws Exception {
        ModelTokenizer tokenizer = Qwen3Fixture.registry().forModel(Qwen3Fixture.MODEL).orElseThrow();
        System.out.println("encoded " + tokenizer.encode("hello world").length + " tokens");
        System.out.println("--- maps");
        Path maps = Path.of("/proc/self/maps");
        if (Files.isReadable(maps)) {
            Files.readAllLines(maps).stream().filter(l -> l.contains(".so")).forEach(System.out::println);
        }
    }
}
