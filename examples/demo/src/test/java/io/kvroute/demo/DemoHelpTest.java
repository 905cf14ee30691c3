package io.kvroute.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.config.RouterOptions;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every command and subcommand of {@code java -jar kvroute-demo.jar} prints its usage and exits 0 on
 * {@code --help} instead of starting a server (which would block on join: the timeout catches it).
 */
class DemoHelpTest {

    private static String run(String... args) {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new DemoMain());
        cli.setOut(new PrintWriter(out, true));
        int code = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> cli.execute(args),
                "--help must not start a server");
        assertThat(code).as(String.join(" ", args)).isZero();
        return out.toString();
    }

    @Test
    void everyCommand_printsUsageAndExitsZero() {
        assertThat(run("--help")).contains("Usage: kvroute-demo").contains("--workers");
        for (String flag : List.of("--help", "-h")) {
            assertThat(run("worker", flag)).as("worker " + flag).contains("Usage: kvroute-mock-worker");
            assertThat(run("router", flag)).as("router " + flag).contains("Usage: kvroute-router")
                    .contains("--prefill-policy");
            assertThat(run("router", "--port", "0", flag)).contains("Usage: kvroute-router");
        }
    }

    @Test
    void helpHelpers_answerFalseWithoutHelp() {
        StringWriter out = new StringWriter();
        assertThat(RouterOptions.printHelpIfRequested(new PrintWriter(out), "--port", "0")).isFalse();
        assertThat(MockWorkerMain.printHelpIfRequested(new PrintWriter(out), "--port", "0")).isFalse();
        assertThat(out.toString()).isEmpty();
        assertThat(RouterOptions.printHelpIfRequested(new PrintWriter(out), "--version")).isTrue();
    }
}
