package io.kvroute.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The scrape-cost probe runs end to end on a small fleet and prints one row per body size (no timing asserted). */
class ScrapeCostProbeSmokeTest {

    @Test
    void smallFleet_printsAHeaderAndARowPerBody_withScrapesDone() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            ScrapeCostProbe.main(new String[] {"20", "50", "1", "4", "1"});
        } finally {
            System.setOut(original);
        }
        List<String> lines = Arrays.asList(captured.toString(StandardCharsets.UTF_8).trim().split("\n"));
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("body_bytes workers");
        for (String row : lines.subList(1, 3)) {
            String[] cols = row.trim().split(" ");
            assertThat(cols).hasSize(6);
            assertThat(Integer.parseInt(cols[1])).isEqualTo(20);
            assertThat(Double.parseDouble(cols[3])).as("scrapes per second").isPositive();
        }
        assertThat(Integer.parseInt(lines.get(2).split(" ")[0])).isGreaterThan(4 * 1024);
    }
}
