package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvroute.war} in the standard Jetty distribution: jetty-home (unpacked by Maven into
 * {@code target/jetty-home-war}), a fresh base made with {@code --add-modules=http,ee10-deploy}, the
 * WAR dropped into {@code webapps/}, Jetty started with {@code start.jar} as a separate JVM on a free
 * port (config from the system property {@code kvroute.config}), and stopped gracefully (SIGTERM runs
 * Jetty's shutdown hook, which stops the server and undeploys the web application).
 */
class JettyHomeWarTest extends WarScenarios {

    @TempDir
    static Path dir;
    private static Process jetty;
    private static Path log;
    private static String base;

    @BeforeAll
    static void deploy() throws Exception {
        Path yaml = startWorkersAndWriteConfig(dir);
        Path home = Path.of(System.getProperty("kvroute.jettyHome", "target/jetty-home-war/jetty-home-12.1.12"));
        assertThat(home.resolve("start.jar")).as("jetty-home unpacked by the unpack-jetty-home-war execution").isRegularFile();
        Path jettyBase = Files.createDirectories(dir.resolve("jetty-base"));
        log = dir.resolve("jetty.log");
        Process setup = java(home, jettyBase, List.of("--add-modules=http,ee10-deploy")).start();
        assertThat(setup.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(setup.exitValue()).as(Files.readString(log)).isZero();
        Files.copy(war(), jettyBase.resolve("webapps/kvroute.war"), StandardCopyOption.REPLACE_EXISTING);

        int port = freePort();
        List<String> jvm = List.of("-Dkvroute.config=" + yaml);
        jetty = java(home, jettyBase, jvm, List.of("jetty.http.host=127.0.0.1", "jetty.http.port=" + port)).start();
        base = "http://127.0.0.1:" + port + "/kvroute";
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() -> {
            assertThat(jetty.isAlive()).as("jetty exited early: %s", Files.readString(log)).isTrue();
            try {
                return http.get(base + "/healthz").getStatus() == 200;
            } catch (Exception notYet) {
                return false;
            }
        });
        new JettyHomeWarTest().awaitModels();
    }

    @AfterAll
    static void stopJetty() throws Exception {
        if (jetty == null) {
            return;
        }
        jetty.destroy(); // SIGTERM: Jetty's shutdown hook stops the server gracefully
        boolean exited = jetty.waitFor(60, TimeUnit.SECONDS);
        if (!exited) {
            jetty.destroyForcibly();
        }
        assertThat(exited).as("Jetty stops within 60 s of SIGTERM").isTrue();
        assertThat(Files.readString(log)).contains("kvroute router deployed");
    }

    @Override
    String base() {
        return base;
    }

    private static ProcessBuilder java(Path home, Path jettyBase, List<String> args) {
        return java(home, jettyBase, List.of(), args);
    }

    private static ProcessBuilder java(Path home, Path jettyBase, List<String> jvmArgs, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmArgs);
        command.add("-jar");
        command.add(home.resolve("start.jar").toString());
        command.add("jetty.home=" + home.toAbsolutePath());
        command.add("jetty.base=" + jettyBase.toAbsolutePath());
        command.addAll(args);
        return new ProcessBuilder(command).directory(jettyBase.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
