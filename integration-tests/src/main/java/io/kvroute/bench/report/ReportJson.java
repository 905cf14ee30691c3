package io.kvroute.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.client.RequestRecord;
import io.kvroute.bench.stats.LatencyStats;
import io.kvroute.bench.stats.LatencySummary;
import io.kvroute.bench.stats.VariantMetrics;
import java.util.List;
import java.util.Map;

/**
 * Builds the two JSON documents: the stable {@code --json} summary (shape documented in
 * docs/benchmark-harness.md; do not change field names without updating it) and the full
 * {@code results.json} (summary fields plus lateness, per-tag metrics and every request record).
 * NaN ("no sample") is written as JSON {@code null}. Stateless.
 */
public final class ReportJson {

    private static final ObjectMapper JSON = new ObjectMapper();

    private ReportJson() {}

    /** The {@code --json} summary. */
    public static ObjectNode summary(RunInfo info, List<VariantResult> results, Map<String, VariantMetrics> metrics) {
        ObjectNode root = header(info);
        if (isCasesOnly(results)) {
            root.set("cases", cases(results));
            return root;
        }
        ObjectNode variants = root.putObject("variants");
        for (VariantResult r : results) {
            variants.set(r.variant(), variantSummary(info, r, metrics.get(r.variant())));
        }
        return root;
    }

    /** The full {@code results.json}. */
    public static ObjectNode full(RunInfo info, List<VariantResult> results, Map<String, VariantMetrics> metrics) {
        ObjectNode root = header(info);
        root.put("seed", info.seed());
        root.put("time_model", info.timeModel());
        root.put("workload", info.workload());
        root.put("command_line", info.commandLine());
        root.put("machine", RunInfo.machine());
        root.put("started_at", info.startedAt().toString());
        root.put("latency_unit", "simulated ms (wall ms x time_scale); lateness in wall ms");
        if (isCasesOnly(results)) {
            root.set("cases", cases(results));
            return root;
        }
        ObjectNode variants = root.putObject("variants");
        for (VariantResult r : results) {
            VariantMetrics m = metrics.get(r.variant());
            ObjectNode v = variantSummary(info, r, m);
            variants.set(r.variant(), v);
            v.put("wall_seconds", r.wallNanos() / 1e9);
            ObjectNode lateness = v.putObject("lateness_wall_ms");
            LatencyStats l = m.latenessWallMs();
            number(lateness, "p50", l.p50());
            number(lateness, "p95", l.p95());
            number(lateness, "p99", l.p99());
            number(lateness, "max", l.max());
            lateness.put("count", l.count());
            if (!m.tags().isEmpty()) {
                ObjectNode tags = v.putObject("tags");
                m.tags().forEach((tag, t) -> {
                    ObjectNode tn = tags.putObject(tag);
                    tn.set("all", latency(t.latency()));
                    number(tn, "output_tok_s", t.outputTokPerSec());
                    tn.put("requests_ok", t.requestsOk());
                    tn.put("requests_failed", t.requestsFailed());
                });
            }
            ArrayNode records = v.putArray("records");
            for (RequestRecord rec : r.records()) {
                records.add(record(rec));
            }
        }
        return root;
    }

    static boolean isCasesOnly(List<VariantResult> results) {
        return !results.isEmpty() && results.stream().allMatch(r -> r.records().isEmpty() && !r.cases().isEmpty());
    }

    private static ObjectNode header(RunInfo info) {
        ObjectNode root = JSON.createObjectNode();
        root.put("scenario", info.scenario());
        root.put("quick", info.quick());
        root.put("time_scale", info.timeScale());
        return root;
    }

    private static ArrayNode cases(List<VariantResult> results) {
        ArrayNode cases = JSON.createArrayNode();
        for (VariantResult r : results) {
            for (VariantResult.CaseResult c : r.cases()) {
                ObjectNode cn = cases.addObject();
                cn.put("name", c.name());
                number(cn, "median_us", c.medianUs());
                number(cn, "seed_us", c.seedUs());
                number(cn, "speedup", c.speedup());
            }
        }
        return cases;
    }

    private static ObjectNode variantSummary(RunInfo info, VariantResult r, VariantMetrics m) {
        ObjectNode v = JSON.createObjectNode();
        v.set("all", latency(m.all()));
        if (info.hasClasses()) {
            ObjectNode classes = v.putObject("classes");
            m.classes().forEach((cls, s) -> classes.set(cls, latency(s)));
        }
        number(v, "output_tok_s", m.outputTokPerSec());
        v.put("requests_ok", m.requestsOk());
        v.put("requests_failed", m.requestsFailed());
        number(v, "cache_hit_rate", m.cacheHitRate());
        ObjectNode reasons = v.putObject("decision_reasons");
        r.decisionReasons().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> number(reasons, e.getKey(), e.getValue()));
        if (r.continuations() != null) {
            v.put("continuations", r.continuations());
        }
        return v;
    }

    static ObjectNode latency(LatencySummary s) {
        ObjectNode n = JSON.createObjectNode();
        number(n, "ttft_p50_ms", s.ttftP50Ms());
        number(n, "ttft_p95_ms", s.ttftP95Ms());
        number(n, "ttft_p99_ms", s.ttftP99Ms());
        number(n, "tpot_p50_ms", s.tpotP50Ms());
        number(n, "e2e_p50_ms", s.e2eP50Ms());
        number(n, "e2e_p95_ms", s.e2eP95Ms());
        n.put("count", s.count());
        return n;
    }

    private static ObjectNode record(RequestRecord r) {
        ObjectNode n = JSON.createObjectNode();
        n.put("index", r.index());
        n.put("class", r.requestClass());
        if (!r.tag().isEmpty()) {
            n.put("tag", r.tag());
        }
        n.put("scheduled_ns", r.scheduledNanos());
        n.put("dispatched_ns", r.dispatchedNanos());
        n.put("sent_ns", r.sentNanos());
        n.put("first_token_ns", r.firstTokenNanos());
        n.put("last_token_ns", r.lastTokenNanos());
        n.put("end_ns", r.endNanos());
        n.put("status", r.status());
        if (r.error() != null) {
            n.put("error", r.error());
        }
        n.put("output_tokens", r.outputTokens());
        n.put("prompt_tokens", r.promptTokens());
        n.put("cached_tokens", r.cachedTokens());
        return n;
    }

    /** Writes a finite number, or null for NaN/infinite ("no sample"). */
    static void number(ObjectNode node, String field, double value) {
        if (Double.isFinite(value)) {
            node.put(field, value);
        } else {
            node.putNull(field);
        }
    }
}
