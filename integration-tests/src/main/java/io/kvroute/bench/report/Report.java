package io.kvroute.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.stats.VariantMetrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a run's outputs: {@code results.json}, {@code report.md} and PNG plots into the output
 * directory, plus the optional {@code --json} summary file. Stateless apart from the paths given.
 */
public final class Report {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Report() {}

    /** What was written. */
    public record Written(Map<String, VariantMetrics> metrics, String consoleTable, List<Path> files) {}

    /** Derives metrics, writes every file and returns the console table. {@code jsonFile} may be null. */
    public static Written write(RunInfo info, List<VariantResult> results, Path outDir, Path jsonFile) throws IOException {
        Files.createDirectories(outDir);
        Map<String, VariantMetrics> metrics = new LinkedHashMap<>();
        for (VariantResult r : results) {
            metrics.put(r.variant(), VariantMetrics.of(r.records(), info.timeScale()));
        }
        List<Path> files = new ArrayList<>();
        List<String> plots = new ArrayList<>();
        if (!ReportJson.isCasesOnly(results) && !results.isEmpty()) {
            String ttft = "ttft.png";
            Charts.ttftBars(outDir.resolve(ttft), info.scenario() + ": TTFT p50/p95 per variant", metrics, info.hasClasses());
            plots.add(ttft);
            if (metrics.values().stream().anyMatch(m -> !m.tags().isEmpty())) {
                String steps = "steps-ttft-p95.png";
                Charts.lines(outDir.resolve(steps), info.scenario() + ": TTFT p95 per step", "step", "TTFT p95 (simulated ms)",
                        stepSeries(metrics));
                plots.add(steps);
            }
        }
        Path resultsJson = outDir.resolve("results.json");
        JSON.writeValue(resultsJson.toFile(), ReportJson.full(info, results, metrics));
        files.add(resultsJson);
        Path reportMd = outDir.resolve("report.md");
        Files.writeString(reportMd, MarkdownReport.render(info, results, metrics, plots));
        files.add(reportMd);
        plots.forEach(p -> files.add(outDir.resolve(p)));
        if (jsonFile != null) {
            Path parent = jsonFile.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            JSON.writeValue(jsonFile.toFile(), ReportJson.summary(info, results, metrics));
            files.add(jsonFile);
        }
        return new Written(metrics, MarkdownReport.table(results, metrics, info.hasClasses()), files);
    }

    private static Map<String, List<Charts.Point>> stepSeries(Map<String, VariantMetrics> metrics) {
        Map<String, List<Charts.Point>> series = new LinkedHashMap<>();
        metrics.forEach((variant, m) -> {
            List<Charts.Point> points = new ArrayList<>();
            int step = 0;
            for (VariantMetrics.TagMetrics t : m.tags().values()) {
                points.add(new Charts.Point(step++, t.latency().ttftP95Ms()));
            }
            series.put(variant, points);
        });
        return series;
    }
}
