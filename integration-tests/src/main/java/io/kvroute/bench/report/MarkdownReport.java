package io.kvroute.bench.report;

import io.kvroute.bench.VariantResult;
import io.kvroute.bench.stats.LatencyStats;
import io.kvroute.bench.stats.LatencySummary;
import io.kvroute.bench.stats.VariantMetrics;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Renders report.md and the console table. Every non-baseline cell shows the value and its change
 * against the baseline (the first variant) as a percentage; "–" marks "no sample" and a change
 * against a zero or missing baseline. Stateless.
 */
public final class MarkdownReport {

    private MarkdownReport() {}

    /** A metric column: header and how to read it from a variant. */
    private record Column(String header, Function<VariantMetrics, Double> value, boolean showChange) {}

    /** Change of {@code value} against {@code baseline} in percent; NaN when undefined. */
    public static double percentChange(double baseline, double value) {
        if (Double.isNaN(baseline) || Double.isNaN(value) || baseline == 0) {
            return Double.NaN;
        }
        return (value - baseline) / Math.abs(baseline) * 100.0;
    }

    /** The main metrics table (also printed to the console). */
    public static String table(List<VariantResult> results, Map<String, VariantMetrics> metrics, boolean hasClasses) {
        if (ReportJson.isCasesOnly(results)) {
            return casesTable(results);
        }
        List<Column> columns = columns(metrics, hasClasses);
        StringBuilder out = new StringBuilder();
        out.append("| variant |");
        columns.forEach(c -> out.append(' ').append(c.header()).append(" |"));
        out.append('\n').append("|---|");
        columns.forEach(c -> out.append("---:|"));
        out.append('\n');
        VariantMetrics baseline = results.isEmpty() ? null : metrics.get(results.get(0).variant());
        for (int i = 0; i < results.size(); i++) {
            VariantMetrics m = metrics.get(results.get(i).variant());
            out.append("| ").append(results.get(i).variant()).append(i == 0 ? " (baseline)" : "").append(" |");
            for (Column c : columns) {
                double v = c.value().apply(m);
                out.append(' ').append(format(v));
                if (i > 0 && c.showChange()) {
                    out.append(" (").append(formatPercent(percentChange(c.value().apply(baseline), v))).append(')');
                }
                out.append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    private static List<Column> columns(Map<String, VariantMetrics> metrics, boolean hasClasses) {
        List<Column> columns = new ArrayList<>();
        columns.add(new Column("TTFT p50 ms", m -> m.all().ttftP50Ms(), true));
        columns.add(new Column("TTFT p95 ms", m -> m.all().ttftP95Ms(), true));
        columns.add(new Column("TTFT p99 ms", m -> m.all().ttftP99Ms(), true));
        if (hasClasses) {
            Set<String> classes = new TreeSet<>();
            metrics.values().forEach(m -> classes.addAll(m.classes().keySet()));
            for (String cls : classes) {
                columns.add(new Column(cls + " TTFT p50 ms", m -> classValue(m, cls, LatencySummary::ttftP50Ms), true));
                columns.add(new Column(cls + " TTFT p95 ms", m -> classValue(m, cls, LatencySummary::ttftP95Ms), true));
                columns.add(new Column(cls + " TTFT p99 ms", m -> classValue(m, cls, LatencySummary::ttftP99Ms), true));
            }
        }
        columns.add(new Column("TPOT p50 ms", m -> m.all().tpotP50Ms(), true));
        columns.add(new Column("e2e p50 ms", m -> m.all().e2eP50Ms(), true));
        columns.add(new Column("e2e p95 ms", m -> m.all().e2eP95Ms(), true));
        columns.add(new Column("output tok/s", VariantMetrics::outputTokPerSec, true));
        columns.add(new Column("ok", m -> (double) m.requestsOk(), false));
        columns.add(new Column("failed", m -> (double) m.requestsFailed(), false));
        columns.add(new Column("cache hit", VariantMetrics::cacheHitRate, true));
        return columns;
    }

    private static double classValue(VariantMetrics m, String cls, Function<LatencySummary, Double> f) {
        LatencySummary s = m.classes().get(cls);
        return s == null ? Double.NaN : f.apply(s);
    }

    private static String casesTable(List<VariantResult> results) {
        StringBuilder out = new StringBuilder("| case | median µs | seed µs | speedup |\n|---|---:|---:|---:|\n");
        for (VariantResult r : results) {
            for (VariantResult.CaseResult c : r.cases()) {
                out.append("| ").append(c.name()).append(" | ").append(format(c.medianUs())).append(" | ")
                        .append(format(c.seedUs())).append(" | ").append(format(c.speedup())).append(" |\n");
            }
        }
        return out.toString();
    }

    /** The whole report.md. */
    public static String render(RunInfo info, List<VariantResult> results, Map<String, VariantMetrics> metrics,
            List<String> plotFiles) {
        StringBuilder md = new StringBuilder();
        md.append("# kvroute benchmark: ").append(info.scenario()).append(info.quick() ? " (--quick)" : "").append("\n\n");
        md.append("- Machine: ").append(RunInfo.machine()).append('\n');
        md.append("- Command: `").append(info.commandLine()).append("`\n");
        md.append("- Started: ").append(info.startedAt()).append(", seed ").append(info.seed()).append('\n');
        md.append("- Time scale: ").append(format(info.timeScale()))
                .append(" simulated ms per wall ms. Latencies are in simulated ms (wall x time scale); "
                        + "send lateness is in wall ms.\n");
        md.append("- Time model: ").append(info.timeModel()).append('\n');
        if (!info.workload().isEmpty()) {
            md.append("- Workload: ").append(info.workload()).append('\n');
        }
        md.append("\n## Results\n\nChange against the baseline (first variant) in parentheses.\n\n");
        md.append(table(results, metrics, info.hasClasses()));
        if (!ReportJson.isCasesOnly(results)) {
            appendDecisionReasons(md, results);
            appendLateness(md, results, metrics);
            appendTags(md, results, metrics);
        }
        if (!plotFiles.isEmpty()) {
            md.append("\n## Plots\n\n");
            plotFiles.forEach(f -> md.append("![").append(f).append("](").append(f).append(")\n\n"));
        }
        return md.toString();
    }

    private static void appendDecisionReasons(StringBuilder md, List<VariantResult> results) {
        Set<String> reasons = new LinkedHashSet<>(new TreeSet<>(
                results.stream().flatMap(r -> r.decisionReasons().keySet().stream()).toList()));
        md.append("\n## Router decision reasons\n\n");
        if (reasons.isEmpty()) {
            md.append("No `kvroute_policy_decisions_total` samples were scraped.\n");
            return;
        }
        md.append("| variant |");
        reasons.forEach(r -> md.append(' ').append(r).append(" |"));
        md.append("\n|---|");
        reasons.forEach(r -> md.append("---:|"));
        md.append('\n');
        for (VariantResult r : results) {
            md.append("| ").append(r.variant()).append(" |");
            reasons.forEach(reason -> md.append(' ').append(format(r.decisionReasons().getOrDefault(reason, 0.0))).append(" |"));
            md.append('\n');
        }
        if (results.stream().anyMatch(r -> r.continuations() != null)) {
            md.append("\nPD continuations: ");
            results.forEach(r -> md.append(r.variant()).append(" = ").append(r.continuations()).append("; "));
            md.append('\n');
        }
    }

    private static void appendLateness(StringBuilder md, List<VariantResult> results, Map<String, VariantMetrics> metrics) {
        md.append("\n## Client send lateness (wall ms, actual minus scheduled send)\n\n");
        md.append("| variant | p50 | p95 | p99 | max | sent |\n|---|---:|---:|---:|---:|---:|\n");
        for (VariantResult r : results) {
            LatencyStats l = metrics.get(r.variant()).latenessWallMs();
            md.append("| ").append(r.variant()).append(" | ").append(format(l.p50())).append(" | ").append(format(l.p95()))
                    .append(" | ").append(format(l.p99())).append(" | ").append(format(l.max())).append(" | ")
                    .append(l.count()).append(" |\n");
        }
    }

    private static void appendTags(StringBuilder md, List<VariantResult> results, Map<String, VariantMetrics> metrics) {
        boolean any = metrics.values().stream().anyMatch(m -> !m.tags().isEmpty());
        if (!any) {
            return;
        }
        md.append("\n## Per step\n\n| variant | step | TTFT p50 ms | TTFT p95 ms | e2e p95 ms | output tok/s | ok | failed |\n"
                + "|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (VariantResult r : results) {
            metrics.get(r.variant()).tags().forEach((tag, t) -> md.append("| ").append(r.variant()).append(" | ")
                    .append(tag).append(" | ").append(format(t.latency().ttftP50Ms())).append(" | ")
                    .append(format(t.latency().ttftP95Ms())).append(" | ").append(format(t.latency().e2eP95Ms()))
                    .append(" | ").append(format(t.outputTokPerSec())).append(" | ").append(t.requestsOk())
                    .append(" | ").append(t.requestsFailed()).append(" |\n"));
        }
    }

    /** Three significant-ish digits: 1636, 33.5, 0.412; "–" for NaN. */
    public static String format(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        double abs = Math.abs(v);
        if (abs >= 100 || v == Math.rint(v)) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (abs >= 1) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    /** Signed percentage with one decimal, "–" when undefined. */
    public static String formatPercent(double pct) {
        if (Double.isNaN(pct)) {
            return "–";
        }
        return String.format(Locale.ROOT, "%+.1f%%", pct);
    }
}
