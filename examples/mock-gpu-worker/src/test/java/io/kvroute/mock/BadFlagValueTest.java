package io.kvroute.mock;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** A flag value the worker refuses ends the command with its message and status 2, never a stack trace. */
class BadFlagValueTest {

    @Test
    void aRefusedValue_isOneLineAndExitStatus2() {
        for (String[] args : new String[][] {{"--engine-loop", "bogus"}, {"--kv-events-hash-seed", "nope"}}) {
            StringWriter err = new StringWriter();
            int status = new CommandLine(new MockWorkerMain()).setExecutionExceptionHandler(MockWorkerMain.BAD_FLAG_VALUE)
                    .setErr(new PrintWriter(err, true)).execute(args);
            assertThat(status).as(String.join(" ", args)).isEqualTo(2);
            assertThat(err.toString()).contains(args[1]).doesNotContain("Exception").doesNotContain("\tat ");
        }
    }
}
