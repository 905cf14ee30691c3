package io.kvroute.bench.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The reference arm: HF tokenizers' Rust core (npm {@code tokenizers}, installed by
 * {@code npm ci} in {@code integration-tests/node-tokenizers}) in a Node child process running
 * {@code encode-server.js}, which times {@code encode(text, addSpecialTokens=false)} itself, so the pipe
 * is outside the measured time. One request per line; the process lives for one scenario run.
 */
final class RustEncoder implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final BufferedWriter in;
    private final BufferedReader out;
    final String version;

    /** One case's timed reps: wall ms each, token count and the ids' hash ({@link TokenizeSpeedScenario#hash}). */
    record Timed(double[] ms, int tokens, int hash) {}

    private RustEncoder(Process process, String version, BufferedWriter in, BufferedReader out) {
        this.process = process;
        this.in = in;
        this.out = out;
        this.version = version;
    }

    /**
     * The node-tokenizers directory with {@code node_modules/tokenizers} installed: {@code explicit} when
     * given, else {@code node-tokenizers} or {@code integration-tests/node-tokenizers} under the working directory.
     */
    static Optional<Path> findDir(String explicit) {
        List<Path> candidates = explicit != null ? List.of(Path.of(explicit))
                : List.of(Path.of("node-tokenizers"), Path.of("integration-tests", "node-tokenizers"));
        for (Path dir : candidates) {
            if (Files.isRegularFile(dir.resolve("node_modules/tokenizers/package.json"))
                    && Files.isRegularFile(dir.resolve("encode-server.js"))) {
                return Optional.of(dir.toAbsolutePath());
            }
        }
        return Optional.empty();
    }

    /** Starts Node on {@code cases} (written to a temporary file, deleted when the JVM exits). */
    static RustEncoder start(Path dir, Path tokenizerJson, List<Map<String, String>> cases) throws IOException {
        Path casesFile = Files.createTempFile("kvroute-tokenize-speed-", ".json");
        casesFile.toFile().deleteOnExit();
        JSON.writeValue(casesFile.toFile(), cases);
        Process p = new ProcessBuilder("node", dir.resolve("encode-server.js").toString(), tokenizerJson.toString(),
                casesFile.toString()).directory(dir.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedWriter in = new BufferedWriter(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String hello = out.readLine();
        if (hello == null) {
            p.destroyForcibly();
            throw new IOException("node encode-server.js exited before it was ready");
        }
        return new RustEncoder(p, JSON.readTree(hello).path("version").asText("?"), in, out);
    }

    Timed time(int caseIndex, int reps) throws IOException {
        in.write("{\"case\":" + caseIndex + ",\"reps\":" + reps + "}\n");
        in.flush();
        String line = out.readLine();
        if (line == null) {
            throw new IOException("node encode-server.js exited");
        }
        JsonNode reply = JSON.readTree(line);
        List<Double> ms = new ArrayList<>();
        reply.path("ms").forEach(n -> ms.add(n.asDouble()));
        return new Timed(ms.stream().mapToDouble(Double::doubleValue).toArray(), reply.path("tokens").asInt(),
                reply.path("hash").asInt());
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
