package io.kvroute.bench.proxy;

import io.kvroute.bench.Readiness;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * nginx and wrk, when installed (Debian packages {@code nginx-light} and {@code wrk}); the benchmarks run
 * without them and say so. Nothing here is used by the test suite.
 */
final class ExternalTools {

    private static final Pattern RPS = Pattern.compile("Requests/sec:\\s+([0-9.]+)");
    private static final Pattern P50 = Pattern.compile("\\n\\s+50%\\s+([0-9.]+)(us|ms|s)");
    private static final Pattern P99 = Pattern.compile("\\n\\s+99%\\s+([0-9.]+)(us|ms|s)");
    private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses:\\s+(\\d+)");
    private static final Pattern SOCKET_ERRORS = Pattern.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

    private ExternalTools() {}

    /** System property that hides nginx and wrk (the test suite sets it, so CI never depends on them). */
    static final String DISABLE_PROPERTY = "kvroute.bench.noExternalTools";

    static Optional<Path> find(String name) {
        if (Boolean.getBoolean(DISABLE_PROPERTY)) {
            return Optional.empty();
        }
        for (String dir : List.of("/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Runs wrk with one thread (the other core is the system under test's) and parses its summary. */
    static ClosedLoopLoad.Result wrk(Path wrk, String url, byte[] body, ApiKeys keys, int connections, long warmupMillis,
                                     long measureMillis) throws IOException, InterruptedException {
        Path script = Files.createTempFile("kvroute-wrk-", ".lua");
        try {
            String escaped = new String(body, StandardCharsets.UTF_8).replace("\\", "\\\\").replace("'", "\\'");
            Files.writeString(script, "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
                    + "wrk.body = '" + escaped + "'\n" + (keys == null ? "" : keys.wrkRequestFunction()));
            if (warmupMillis > 0) {
                runWrk(wrk, script, url, connections, warmupMillis);
            }
            String out = runWrk(wrk, script, url, connections, measureMillis);
            double rps = number(RPS, out).orElseThrow(() -> new IOException("wrk printed no Requests/sec:\n" + out));
            long failed = (long) (double) number(NON_2XX, out).orElse(0.0);
            Matcher errors = SOCKET_ERRORS.matcher(out);
            if (errors.find()) {
                for (int g = 1; g <= 4; g++) {
                    failed += Long.parseLong(errors.group(g));
                }
            }
            long served = Math.max(0, Math.round(rps * measureMillis / 1000.0) - failed);
            return new ClosedLoopLoad.Result(rps, micros(P50, out), micros(P99, out), served, failed);
        } finally {
            Files.deleteIfExists(script);
        }
    }

    private static String runWrk(Path wrk, Path script, String url, int connections, long millis)
            throws IOException, InterruptedException {
        long seconds = Math.max(1, (millis + 999) / 1000);
        Process p = new ProcessBuilder(wrk.toString(), "-t1", "-c" + connections, "-d" + seconds + "s", "--latency",
                "-s", script.toString(), url).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(seconds + 30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("wrk failed:\n" + out);
        }
        return out;
    }

    private static Optional<Double> number(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        return m.find() ? Optional.of(Double.parseDouble(m.group(1))) : Optional.empty();
    }

    private static double micros(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        if (!m.find()) {
            return Double.NaN;
        }
        double v = Double.parseDouble(m.group(1));
        return switch (m.group(2)) {
            case "us" -> v;
            case "ms" -> v * 1000;
            default -> v * 1_000_000;
        };
    }

    /** An nginx reverse proxy (one worker process, keep-alive upstream pool) in front of {@code upstreams}. */
    static final class NginxProxy implements AutoCloseable {
        private final Process process;
        private final Path prefix;
        final int port;

        NginxProxy(Path nginx, List<String> upstreamHostPorts) throws Exception {
            prefix = Files.createTempDirectory("kvroute-nginx-");
            port = freePort();
            StringBuilder servers = new StringBuilder();
            for (String hp : upstreamHostPorts) {
                servers.append("    server ").append(hp).append(";\n");
            }
            String conf = """
                    worker_processes 1;
                    daemon off;
                    user root;
                    pid %1$s/nginx.pid;
                    error_log %1$s/error.log warn;
                    events { worker_connections 4096; }
                    http {
                      access_log off;
                      client_body_temp_path %1$s/body;
                      proxy_temp_path %1$s/proxy;
                      fastcgi_temp_path %1$s/fastcgi;
                      uwsgi_temp_path %1$s/uwsgi;
                      scgi_temp_path %1$s/scgi;
                      upstream workers {
                    %2$s    keepalive 256;
                      }
                      server {
                        listen 127.0.0.1:%3$d;
                        location / {
                          proxy_pass http://workers;
                          proxy_http_version 1.1;
                          proxy_set_header Connection "";
                          proxy_buffering on;
                        }
                      }
                    }
                    """.formatted(prefix, servers, port);
            Path confFile = prefix.resolve("nginx.conf");
            Files.writeString(confFile, conf);
            process = new ProcessBuilder(nginx.toString(), "-p", prefix.toString(), "-c", confFile.toString())
                    .redirectErrorStream(true).redirectOutput(prefix.resolve("stdout.log").toFile()).start();
            Process started = process;
            boolean up;
            try {
                up = Readiness.await(() -> {
                    if (!started.isAlive()) {
                        throw new IOException("nginx exited");
                    }
                    return listening(port);
                }, Duration.ofSeconds(10), Duration.ofMillis(50));
            } catch (IOException exited) {
                up = false;
            }
            if (!up) {
                throw new IOException("nginx did not start: " + Files.readString(prefix.resolve("stdout.log"))
                        + readIfExists(prefix.resolve("error.log")));
            }
        }

        String url(String path) {
            return "http://127.0.0.1:" + port + path;
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }

        private static String readIfExists(Path p) throws IOException {
            return Files.exists(p) ? Files.readString(p) : "";
        }

        private static boolean listening(int port) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                return true;
            } catch (IOException e) {
                return false;
            }
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    static List<String> hostPorts(List<String> urls) {
        List<String> out = new ArrayList<>();
        for (String u : urls) {
            out.add(u.replaceFirst("^http://", "").replaceFirst("/.*$", ""));
        }
        return out;
    }
}
