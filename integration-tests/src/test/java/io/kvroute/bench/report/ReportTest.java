package io.kvroute.bench.report;

import static io.kvroute.bench.stats.TestRecords.failed;
import static io.kvroute.bench.stats.TestRecords.ok;
import static io.kvroute.bench.stats.TestRecords.tagged;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.bench.VariantResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static RunInfo info(String scenario, boolean hasClasses) {
        return new RunInfo(scenario, true, 42, 2.0, "test time model", "test workload", "java -jar x " + scenario,
                Instant.parse("2026-01-01T00:00:00Z"), hasClasses);
    }

    private static List<VariantResult> twoVariants() {
        return List.of(
                VariantResult.of("default", List.of(ok(0, "short", 0, 100, 500, 5), ok(1, "long", 1, 1_000, 2_000, 5)),
                        3_000_000_000L, Map.of("cache_hit", 3.0, "load_balance", 1.0)),
                VariantResult.of("hrrn", List.of(ok(0, "short", 0, 50, 400, 5), failed(1, "long")),
                        3_000_000_000L, Map.of("cache_hit", 2.0)));
    }

    @Test
    void writesResultsReportPlotsAndSummary(@TempDir Path dir) throws Exception {
        Path summary = dir.resolve("sub/summary.json");
        Report.Written written = Report.write(info("long-first-burst", true), twoVariants(), dir.resolve("out"), summary);

        assertThat(dir.resolve("out/results.json")).isNotEmptyFile();
        assertThat(dir.resolve("out/report.md")).isNotEmptyFile();
        byte[] png = Files.readAllBytes(dir.resolve("out/ttft.png"));
        assertThat(png).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
        assertThat(summary).isNotEmptyFile();
        assertThat(written.files()).contains(summary, dir.resolve("out/report.md"));
        assertThat(written.consoleTable()).contains("| hrrn |");
    }

    @Test
    void summary_hasTheDocumentedShape(@TempDir Path dir) throws Exception {
        Path summary = dir.resolve("summary.json");
        Report.write(info("long-first-burst", true), twoVariants(), dir, summary);
        JsonNode root = JSON.readTree(summary.toFile());

        assertThat(root.fieldNames()).toIterable().containsExactly("scenario", "quick", "time_scale", "variants");
        assertThat(root.path("scenario").asText()).isEqualTo("long-first-burst");
        assertThat(root.path("time_scale").asDouble()).isEqualTo(2.0);
        assertThat(root.path("variants").fieldNames()).toIterable().containsExactly("default", "hrrn");
        JsonNode hrrn = root.path("variants").path("hrrn");
        assertThat(hrrn.fieldNames()).toIterable().containsExactly("all", "classes", "output_tok_s", "requests_ok",
                "requests_failed", "cache_hit_rate", "decision_reasons");
        assertThat(hrrn.path("all").fieldNames()).toIterable().containsExactly("ttft_p50_ms", "ttft_p95_ms",
                "ttft_p99_ms", "tpot_p50_ms", "e2e_p50_ms", "e2e_p95_ms", "count");
        // time scale 2: 50 wall ms is 100 simulated ms
        assertThat(hrrn.path("classes").path("short").path("ttft_p50_ms").asDouble()).isEqualTo(100.0);
        // the only long request failed: no sample is null, not 0 or NaN
        assertThat(hrrn.path("classes").path("long").path("ttft_p50_ms").isNull()).isTrue();
        assertThat(hrrn.path("classes").path("long").path("count").asInt()).isZero();
        assertThat(hrrn.path("requests_failed").asInt()).isEqualTo(1);
        assertThat(root.path("variants").path("default").path("decision_reasons").path("cache_hit").asDouble()).isEqualTo(3.0);
        assertThat(root.path("variants").path("default").path("cache_hit_rate").asDouble()).isEqualTo(0.5);
    }

    @Test
    void summary_omitsClassesWithoutThemAndAddsContinuationsOnlyWhenPresent(@TempDir Path dir) throws Exception {
        Path summary = dir.resolve("summary.json");
        List<VariantResult> results = List.of(
                new VariantResult("pd", List.of(ok(0, "", 0, 10, 20, 2)), 1, Map.of(), 4L, List.of()));
        Report.write(info("pd", false), results, dir, summary);
        JsonNode pd = JSON.readTree(summary.toFile()).path("variants").path("pd");

        assertThat(pd.has("classes")).isFalse();
        assertThat(pd.path("continuations").asLong()).isEqualTo(4);
    }

    @Test
    void treeCases_replaceVariantsInTheSummary(@TempDir Path dir) throws Exception {
        Path summary = dir.resolve("summary.json");
        List<VariantResult> results = List.of(new VariantResult("all", List.of(), 1, Map.of(), null,
                List.of(new VariantResult.CaseResult("insert-16k", 12.5, 50.0, 4.0))));
        Report.write(info("tree", false), results, dir, summary);
        JsonNode root = JSON.readTree(summary.toFile());

        assertThat(root.has("variants")).isFalse();
        assertThat(root.path("cases").get(0).path("name").asText()).isEqualTo("insert-16k");
        assertThat(root.path("cases").get(0).path("speedup").asDouble()).isEqualTo(4.0);
        assertThat(Files.readString(dir.resolve("report.md"))).contains("| insert-16k | 12.5 | 50 | 4 |");
    }

    @Test
    void resultsJson_keepsEveryRecordAndTheRunFacts(@TempDir Path dir) throws Exception {
        List<VariantResult> results = List.of(VariantResult.of("a",
                List.of(tagged(0, "step-1", 0, 10, 20), tagged(1, "step-2", 100, 30, 40)), 1, Map.of()));
        Report.write(info("saturation", false), results, dir, null);
        JsonNode root = JSON.readTree(dir.resolve("results.json").toFile());

        assertThat(root.path("time_model").asText()).isEqualTo("test time model");
        assertThat(root.path("machine").asText()).contains("cores");
        assertThat(root.path("variants").path("a").path("records").size()).as(root.toString()).isEqualTo(2);
        assertThat(root.path("variants").path("a").path("tags").fieldNames()).toIterable()
                .containsExactly("step-1", "step-2");
        assertThat(dir.resolve("steps-ttft-p95.png")).isNotEmptyFile();
    }

    @Test
    void noVariants_stillWritesEmptyReports(@TempDir Path dir) throws Exception {
        Report.write(info("x", false), List.of(), dir, dir.resolve("s.json"));

        assertThat(JSON.readTree(dir.resolve("s.json").toFile()).path("variants").size()).isZero();
        assertThat(dir.resolve("report.md")).isNotEmptyFile();
    }
}
