package io.kvroute.bench.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.bench.BenchMain;
import io.kvroute.bench.ScenarioRegistry;
import io.kvroute.bench.fleet.FleetFactories;
import io.kvroute.bench.report.Progress;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --quick} smoke runs of the proxy benchmarks with the Java load generator (nginx and wrk are
 * hidden, so CI never depends on them): every target answers every request through the real router,
 * tokenizer included, and the side-by-side table has one row per target. Figures are the benchmark's
 * business (docs/benchmarks.md), not asserted here.
 */
class ProxyBenchSmokeTest {

    @TempDir
    Path dir;

    @BeforeAll
    static void hideExternalTools() {
        System.setProperty(ExternalTools.DISABLE_PROPERTY, "true");
    }

    @AfterAll
    static void restore() {
        System.clearProperty(ExternalTools.DISABLE_PROPERTY);
    }

    @Test
    void proxyOverhead_quick_measuresEveryTargetWithNoFailedRequest() throws Exception {
        List<String> rows = run("proxy-overhead", "proxy-overhead.md");
        assertThat(rows).extracting(r -> r.split("\\|")[1].trim())
                .containsExactly("direct", "jetty ProxyHandler", "kvroute round_robin", "kvroute cache_aware+tokenizer");
        assertEveryRowServedWithoutFailure(dir.resolve("proxy-overhead.md"), rows);
    }

    @Test
    void fleetScale_quick_measuresEachSizeAndPolicyWithNoFailedRequest() throws Exception {
        List<String> rows = run("fleet-scale", "fleet-scale.md");
        assertThat(rows).extracting(r -> r.split("\\|")[1].trim() + " " + r.split("\\|")[2].trim())
                .containsExactly("4 round_robin", "4 cache_aware+tokenizer", "64 round_robin", "64 cache_aware+tokenizer");
        assertEveryRowServedWithoutFailure(dir.resolve("fleet-scale.md"), rows);
    }

    /**
     * Every request through the QoS router carries one of the 10,000 tenants' keys and is served (a key the
     * tenants file does not hold would be a 401, counted as failed), in both the closed and the open loop.
     */
    @Test
    void qosOverhead_quick_servesEveryTenantsRequestOnBothRouters() throws Exception {
        List<String> rows = run("qos-overhead", "qos-overhead.md");
        List<String> closed = rows.stream().takeWhile(r -> !r.startsWith("| target (open loop)")).toList();
        assertThat(closed).extracting(r -> r.split("\\|")[1].trim())
                .containsExactly("direct", QosOverheadScenario.PLAIN, QosOverheadScenario.QOS);
        assertEveryRowServedWithoutFailure(dir.resolve("qos-overhead.md"), closed);
        List<String> lines = Files.readAllLines(dir.resolve("qos-overhead.md"));
        int openHeader = lines.indexOf(lines.stream().filter(l -> l.startsWith("| target (open loop)")).findFirst().orElseThrow());
        List<String> open = lines.subList(openHeader + 2, openHeader + 4);
        assertThat(open).extracting(r -> r.split("\\|")[1].trim())
                .containsExactly(QosOverheadScenario.PLAIN, QosOverheadScenario.QOS);
        for (String row : open) {
            String[] cells = row.split("\\|");
            assertThat(Long.parseLong(cells[6].trim())).as(row).isEqualTo(200); // 1 s at 200 req/s
            assertThat(cells[7].trim()).as(row).isEqualTo("0");
        }
        assertThat(lines).anyMatch(l -> l.startsWith("QoS cost: throughput "));
    }

    private List<String> run(String scenario, String table) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = BenchMain.run(new String[] {scenario, "--quick", "--out", dir.toString()}, ScenarioRegistry.defaults(),
                FleetFactories.load(), Progress.silent(), new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        assertThat(code).as(out.toString(StandardCharsets.UTF_8)).isZero();
        return Files.readAllLines(dir.resolve(table)).stream().skip(2).filter(l -> l.startsWith("|")).toList();
    }

    /** The served and failed columns are found by their header, so a new column cannot shift what is checked. */
    private static void assertEveryRowServedWithoutFailure(Path table, List<String> rows) throws Exception {
        List<String> header = List.of(Files.readAllLines(table).get(0).split("\\|")).stream().map(String::trim).toList();
        int served = header.indexOf("served");
        int failed = header.indexOf("failed");
        assertThat(served).as("a served column in %s", header).isPositive();
        assertThat(failed).as("a failed column in %s", header).isPositive();
        for (String row : rows) {
            String[] cells = row.split("\\|");
            assertThat(Long.parseLong(cells[served].trim())).as(row).isPositive();
            assertThat(cells[failed].trim()).as(row).isEqualTo("0");
        }
    }
}
