package io.kvroute.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PlainProgressTest {

    @Test
    void printsAtMostOneLinePerTenthPlusStartAndDone() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PlainProgress p = new PlainProgress("burst/hrrn", 1_000, new PrintStream(bytes, true, StandardCharsets.UTF_8))) {
            for (int i = 0; i < 1_000; i++) {
                p.step();
            }
        }
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");

        assertThat(lines[0]).isEqualTo("[burst/hrrn] started: 1000 requests");
        assertThat(lines).hasSize(11); // start, 10%..90%, done
        assertThat(lines[1]).startsWith("[burst/hrrn] 100/1000 (10%)");
        assertThat(lines[10]).startsWith("[burst/hrrn] done: 1000/1000");
    }

    @Test
    void zeroTotal_onlyStartAndDone() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new PlainProgress("x", 0, new PrintStream(bytes, true, StandardCharsets.UTF_8)).close();

        assertThat(bytes.toString(StandardCharsets.UTF_8).split("\n")).hasSize(2);
    }
}
