package io.kvroute.it;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A {@code $JETTY_BASE} over the jetty-home distribution that Maven unpacked (execution
 * {@code unpack-jetty-home-war}, shared with the WAR test), driven the way an operator drives it: {@code start.jar} in
 * separate JVMs. Jetty listens on an ephemeral port and, through jetty-home's {@code shutdown}
 * module, an ephemeral stop port, both read back from its output; {@link #stop()} is the graceful
 * {@code --stop}.
 */
final class JettyBase implements AutoCloseable {

    private static final Pattern HTTP_PORT = Pattern.compile("Started oejs\\.ServerConnector@\\S+\\{HTTP/1\\.1[^}]*\\}\\{[^}]*:(\\d+)\\}");
    private static final Pattern STOP_PORT = Pattern.compile("(?m)^STOP\\.PORT=(\\d+)$");
    private static final String STOP_KEY = "kvroute-it";

    final Path home;
    final Path base;
    private final Path log;
    private Process jetty;
    private int httpPort = -1;
    private int stopPort = -1;

    JettyBase(Path base) {
        this.home = Path.of(requiredProperty("kvroute.it.jettyHome"));
        this.base = base;
        this.log = base.resolve("jetty.log");
    }

    static String requiredProperty(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("system property " + name + " is not set: run through Maven failsafe (mvn verify)");
        }
        return value;
    }

    /** Unzips a module distribution (modules/, etc/, lib/) into the base. */
    void unzip(Path zip) throws IOException {
        if (!Files.isRegularFile(zip)) {
            throw new IllegalStateException(zip + " is missing: package the module first (mvn -pl integration-tests -am verify)");
        }
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(zip))) {
            for (ZipEntry entry; (entry = in.getNextEntry()) != null; ) {
                Path target = base.resolve(entry.getName()).normalize();
                if (!target.startsWith(base)) {
                    throw new IOException("zip entry outside the base: " + entry.getName());
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                } else {
                    Files.createDirectories(target.getParent());
                    Files.copy(in, target);
                }
            }
        }
    }

    /** Runs {@code start.jar} with {@code args} to completion; returns its output, failing on a non-zero exit. */
    String startJar(String... args) throws Exception {
        Path output = base.resolve("start-jar-" + System.nanoTime() + ".log");
        long startNanos = System.nanoTime();
        Process process = launch(List.of(args), output);
        boolean exited = process.waitFor(60, TimeUnit.SECONDS);
        log("start.jar " + String.join(" ", args), startNanos);
        if (!exited) {
            process.destroyForcibly();
            throw new IllegalStateException("start.jar " + List.of(args) + " did not finish");
        }
        String out = Files.readString(output, StandardCharsets.UTF_8);
        if (process.exitValue() != 0) {
            throw new IllegalStateException("start.jar " + List.of(args) + " exited " + process.exitValue() + ":\n" + out);
        }
        return out;
    }

    private Process launch(List<String> args, Path output) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-jar", home.resolve("start.jar").toString()));
        command.addAll(args);
        return new ProcessBuilder(command).directory(base.toFile()).redirectErrorStream(true)
                .redirectOutput(output.toFile()).start();
    }

    /** Starts Jetty on an ephemeral port and waits until both ports are known (at most 60 s). */
    int start(String... properties) throws Exception {
        // --module=shutdown enables jetty-home's shutdown module for this run only (no extra start.jar call).
        List<String> args = new ArrayList<>(List.of("--module=shutdown", "jetty.http.host=127.0.0.1", "jetty.http.port=0",
                "jetty.shutdown.port=0", "jetty.shutdown.key=" + STOP_KEY));
        args.addAll(List.of(properties));
        long startNanos = System.nanoTime();
        jetty = launch(args, log);
        try {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                String out = output();
                if (HTTP_PORT.matcher(out).find() && STOP_PORT.matcher(out).find()) {
                    return true;
                }
                if (!jetty.isAlive()) {
                    throw new IllegalStateException("Jetty exited " + jetty.exitValue() + " before it started:\n" + out);
                }
                return false;
            });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException("Jetty did not start within 60 s:\n" + output(), e);
        }
        String out = output();
        Matcher http = HTTP_PORT.matcher(out);
        Matcher stop = STOP_PORT.matcher(out);
        http.find();
        stop.find();
        httpPort = Integer.parseInt(http.group(1));
        stopPort = Integer.parseInt(stop.group(1));
        log("Jetty started", startNanos);
        return httpPort;
    }

    String url(String path) {
        return "http://127.0.0.1:" + httpPort + path;
    }

    String output() throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }

    /** The graceful stop an operator uses ({@code start.jar --stop}); returns Jetty's exit code. */
    int stop() throws Exception {
        startJar("--stop", "stop.port=" + stopPort, "stop.key=" + STOP_KEY, "stop.wait=30");
        if (!jetty.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Jetty did not exit after --stop:\n" + output());
        }
        return jetty.exitValue();
    }

    /** Stage timings on stdout: the machine's load shows up here, not in assertions. */
    private static void log(String stage, long startNanos) {
        System.out.printf("[jetty-home IT] %s: %d ms%n", stage, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
    }

    @Override
    public void close() {
        if (jetty != null && jetty.isAlive()) {
            jetty.destroyForcibly();
        }
    }
}
