package io.kvroute.scheduler.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the hand-written load-report vectors under {@code /load-vectors-hand/} (format in its
 * {@code README.txt}): bytes assembled by a person from the msgpack spec, so that neither the
 * scheduler's encoder nor the router's decoder is checked against its own output. Public so the
 * router's tests (which get this module's test-jar) read the files the same way.
 */
public final class HandLoadVectors {

    /** One file: its name, the payload bytes and the {@code @key=value} expectations. */
    public record Vector(String name, byte[] payload, Map<String, String> expected) {
        public boolean valid() {
            return Boolean.parseBoolean(expected.get("valid"));
        }
    }

    private HandLoadVectors() {}

    public static List<Vector> all() {
        List<Vector> out = new ArrayList<>();
        for (String name : text("index.txt").lines().filter(l -> !l.isBlank()).toList()) {
            out.add(parse(name, text(name + ".hex")));
        }
        return out;
    }

    static Vector parse(String name, String source) {
        StringBuilder hex = new StringBuilder();
        Map<String, String> expected = new LinkedHashMap<>();
        for (String line : source.lines().toList()) {
            String body = line.contains("#") ? line.substring(0, line.indexOf('#')) : line;
            body = body.strip();
            if (body.startsWith("@")) {
                int eq = body.indexOf('=');
                expected.put(body.substring(1, eq), body.substring(eq + 1));
            } else {
                hex.append(body.replaceAll("\\s+", ""));
            }
        }
        return new Vector(name, HexFormat.of().parseHex(hex), expected);
    }

    private static String text(String name) {
        try (InputStream in = HandLoadVectors.class.getResourceAsStream("/load-vectors-hand/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing classpath resource /load-vectors-hand/" + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
