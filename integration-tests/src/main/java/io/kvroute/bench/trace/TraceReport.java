package io.kvroute.bench.trace;

import io.kvroute.bench.report.Charts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a trace replay's own report beside the harness's: a markdown table of every arm's
 * {@link ArmSummary} with the infinite-cache bound and each arm's ratios to round_robin and to the
 * bound, and a PNG of mean TTFT over trace time per arm. Stateless.
 */
final class TraceReport {

    private TraceReport() {}

    static String table(String heading, List<ArmSummary> arms, MooncakeTrace.Bound bound) {
        StringBuilder sb = new StringBuilder();
        sb.append(heading).append("\n\n");
        sb.append(String.format(Locale.ROOT, "Infinite shared cache over this slice: %.3f of blocks, %.3f of prompt tokens "
                + "(%,d of %,d).%n%n", bound.blockRatio(), bound.tokenRatio(), bound.reusedTokens(), bound.tokens()));
        sb.append("| arm | ok / failed | cache-served | / bound | TTFT mean s | / round_robin | p50 s | p99 s | e2e mean s"
                + " | e2e p99 s | req/s | out tok/s | imbalance | decision µs |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        double rrMean = arms.stream().filter(a -> a.arm().equals(TraceArms.ROUND_ROBIN)).mapToDouble(ArmSummary::ttftMeanMs)
                .findFirst().orElse(Double.NaN);
        for (ArmSummary a : arms) {
            sb.append(String.format(Locale.ROOT,
                    "| %s | %d / %d | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %.2f | %s |%n",
                    a.arm(), a.requests() - a.failed(), a.failed(), a.cacheServedFraction(),
                    a.cacheServedFraction() / bound.tokenRatio(), a.ttftMeanMs() / 1000, a.ttftMeanMs() / rrMean,
                    a.ttftP50Ms() / 1000, a.ttftP99Ms() / 1000, a.e2eMeanMs() / 1000, a.e2eP99Ms() / 1000,
                    a.requestsPerSec(), a.outputTokensPerSec(), a.imbalance(),
                    Double.isNaN(a.decisionMicros()) ? "-" : String.format(Locale.ROOT, "%.1f", a.decisionMicros())));
        }
        return sb.toString();
    }

    static void plot(Path file, String title, List<ArmSummary> arms) throws IOException {
        Map<String, List<Charts.Point>> series = new LinkedHashMap<>();
        for (ArmSummary a : arms) {
            series.put(a.arm(), a.ttftOverTime());
        }
        Charts.lines(file, title, "arrival (s, trace time / speed)", "mean TTFT (s, per " + (int) ArmSummary.TIME_BUCKET_SECS + " s)", series);
    }

    static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
