package io.kvroute.bench.report;

import static io.kvroute.bench.stats.TestRecords.ok;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.bench.VariantResult;
import io.kvroute.bench.stats.VariantMetrics;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MarkdownReportTest {

    @Test
    void percentChange_againstBaseline() {
        assertThat(MarkdownReport.percentChange(1636, 335)).isCloseTo(-79.52, org.assertj.core.data.Offset.offset(0.01));
        assertThat(MarkdownReport.percentChange(100, 150)).isEqualTo(50.0);
        assertThat(MarkdownReport.percentChange(0, 5)).isNaN();
        assertThat(MarkdownReport.percentChange(Double.NaN, 5)).isNaN();
        assertThat(MarkdownReport.formatPercent(-79.52)).isEqualTo("-79.5%");
        assertThat(MarkdownReport.formatPercent(Double.NaN)).isEqualTo("–");
    }

    @Test
    void format_noSampleIsADash() {
        assertThat(MarkdownReport.format(Double.NaN)).isEqualTo("–");
        assertThat(MarkdownReport.format(1636.4)).isEqualTo("1636");
        assertThat(MarkdownReport.format(33.46)).isEqualTo("33.5");
        assertThat(MarkdownReport.format(0.4123)).isEqualTo("0.412");
    }

    @Test
    void table_marksBaselineAndShowsChangePerClass() {
        List<VariantResult> results = List.of(
                VariantResult.of("default", List.of(ok(0, "short", 0, 200, 400, 3), ok(1, "long", 0, 1000, 2000, 3)), 1, Map.of()),
                VariantResult.of("hrrn", List.of(ok(0, "short", 0, 100, 400, 3), ok(1, "long", 0, 1000, 2000, 3)), 1, Map.of()));
        Map<String, VariantMetrics> metrics = new LinkedHashMap<>();
        results.forEach(r -> metrics.put(r.variant(), VariantMetrics.of(r.records(), 1.0)));

        String table = MarkdownReport.table(results, metrics, true);

        assertThat(table).contains("| default (baseline) |").contains("short TTFT p50 ms").contains("long TTFT p95 ms");
        String hrrnRow = table.lines().filter(l -> l.startsWith("| hrrn")).findFirst().orElseThrow();
        assertThat(hrrnRow).contains("100 (-50.0%)").contains("1000 (+0.0%)");
        String baselineRow = table.lines().filter(l -> l.startsWith("| default")).findFirst().orElseThrow();
        assertThat(baselineRow).doesNotContain("%)");
    }

    @Test
    void render_statesMachineCommandAndTimeModel() {
        RunInfo info = new RunInfo("interleaved", true, 7, 4.0, "steps of 25 ms per 1k tokens", "192 requests",
                "java -jar kvroute-bench.jar interleaved --quick", Instant.EPOCH, true);
        List<VariantResult> results = List.of(VariantResult.of("default", List.of(ok(0, "short", 0, 5, 9, 2)), 1,
                Map.of("load_balance", 1.0)));
        Map<String, VariantMetrics> metrics = Map.of("default", VariantMetrics.of(results.get(0).records(), 4.0));

        String md = MarkdownReport.render(info, results, metrics, List.of("ttft.png"));

        assertThat(md).contains("(--quick)").contains("cores").contains("JDK")
                .contains("`java -jar kvroute-bench.jar interleaved --quick`")
                .contains("Time scale: 4").contains("steps of 25 ms per 1k tokens").contains("192 requests")
                .contains("load_balance").contains("![ttft.png](ttft.png)").contains("lateness");
    }
}
