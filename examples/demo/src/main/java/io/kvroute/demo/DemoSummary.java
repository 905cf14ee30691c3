package io.kvroute.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/** What the demo prints: counts, latency percentiles, per-worker spread and cache hits. */
final class DemoSummary {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String policy;
    private final int workers;
    private final int requests;
    private final int errors;
    private final Histogram ttftMicros;
    private final Histogram e2eMicros;
    private final Map<String, Integer> perWorker;
    private final long promptTokens;
    private final long cachedTokens;
    private final long wallNanos;
    private final RouterCounters counters;
    /** Per worker url: engine type, load source, KV events (empty for phase 2). */
    private final Map<String, String> fleet;

    private DemoSummary(Builder b) {
        this.policy = b.policy;
        this.workers = b.workers;
        this.requests = b.requests;
        this.errors = b.errors;
        this.ttftMicros = b.ttftMicros.copy();
        this.e2eMicros = b.e2eMicros.copy();
        this.perWorker = new TreeMap<>(b.perWorker);
        this.fleet = b.fleet;
        this.promptTokens = b.promptTokens;
        this.cachedTokens = b.cachedTokens;
        this.wallNanos = b.wallNanos;
        this.counters = b.counters == null ? RouterCounters.EMPTY : b.counters;
        this.tenantLines = new TreeMap<>();
        b.okByTenant.forEach((tenant, ok) -> {
            Histogram h = b.ttftByTenant.get(tenant);
            tenantLines.put(tenant, String.format(java.util.Locale.ROOT, "%d ok, TTFT p50 %.1f ms", ok,
                    h == null ? Double.NaN : ms(h, 50)));
        });
    }

    /** Per tenant (name and class): requests answered and streaming TTFT p50, as the client saw them. */
    private final Map<String, String> tenantLines;

    private DemoSummary pd;

    int errors() {
        return errors;
    }

    int pdErrors() {
        return pd == null ? 0 : pd.errors;
    }

    void pd(DemoSummary pdPhase) {
        this.pd = pdPhase;
    }

    double cacheHitRate() {
        return promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens;
    }

    private static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1000.0;
    }

    void print(PrintStream out) {
        out.println();
        out.println("kvroute demo summary");
        out.println("  policy            " + policy + " over " + workers + " mock workers");
        out.printf("  requests          %d (%d errors) in %.1f s%n", requests, errors, wallNanos / 1e9);
        out.printf("  TTFT (streaming)  p50 %.1f ms   p95 %.1f ms%n", ms(ttftMicros, 50), ms(ttftMicros, 95));
        out.printf("  end to end        p50 %.1f ms   p95 %.1f ms%n", ms(e2eMicros, 50), ms(e2eMicros, 95));
        out.printf("  prefix cache hits %.1f%% of prompt tokens (%d of %d)%n", 100 * cacheHitRate(), cachedTokens, promptTokens);
        out.printf("  ingress tokens    %d chats tokenized once at the router; %d sent with the router's input_ids (%s)%n",
                counters.tokenized(), Math.max(0, counters.forwarded() - counters.engineUnsupported()),
                counters.forwardingOutcomes());
        out.printf("  tokenizer cache   %.1f%% of chat token ids reused from earlier turns' prefixes (%s)%n",
                100 * counters.tokenizerCacheHitRate(), counters.tokenizerCacheTokens());
        out.println("  cache index       " + counters.cacheIndex()
                + " (exact = the engines' own KV events; approximate = the router's prefix tree)");
        out.println("  decisions         " + counters.decisions());
        out.println("  pressure sources  " + counters.pressureSources());
        if (counters.engineUnsupported() > 0) {
            out.printf("  vLLM workers      %d chats sent without the router's ids (vLLM renders chat itself and "
                    + "ignores input_ids; routing still used them)%n", counters.engineUnsupported());
        }
        if (!tenantLines.isEmpty()) {
            out.println("  tenants           identified by API key (--tenants-file), class from x-kvroute-priority clamped to the tenant's ceiling:");
            tenantLines.forEach((tenant, line) -> out.printf("    %-28s %s%n", tenant, line));
            out.println("    the class also reaches the engines as their own priority (--qos-engine-priority): interactive "
                    + "is priority 1 on SGLang-style workers and -1 on vLLM-style ones, which run priority scheduling;");
            out.println("    it orders only requests that wait in an engine, which the demo's load rarely makes (under load: "
                    + "docs/benchmarks.md, noisy-neighbor)");
        }
        if (!counters.loraDecisions().isEmpty()) {
            out.println("  LoRA adapter      requests for " + DemoWorkload.ADAPTER + " placed on the workers that serve it: "
                    + counters.loraDecisions() + " (resident = already loaded there)");
        }
        out.println("  requests per worker");
        perWorker.forEach((worker, count) -> out.printf("    %-28s %4d   %s%n", worker, count,
                fleet.getOrDefault(worker, "")));
        if (pd != null) {
            out.println();
            out.println("  phase 2: " + pd.policy);
            out.printf("  requests          %d (%d errors) in %.1f s%n", pd.requests, pd.errors, pd.wallNanos / 1e9);
            out.printf("  TTFT (streaming)  p50 %.1f ms   p95 %.1f ms%n", ms(pd.ttftMicros, 50), ms(pd.ttftMicros, 95));
            out.printf("  continuations     %d segments re-dispatched after a decode node ran out of KV%n", pd.counters.continuations());
            out.println("  decisions         " + pd.counters.decisions());
        }
    }

    String toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("policy", policy);
        root.put("requests", requests);
        root.put("errors", errors);
        root.put("ttft_p50_ms", ms(ttftMicros, 50));
        root.put("ttft_p95_ms", ms(ttftMicros, 95));
        root.put("e2e_p50_ms", ms(e2eMicros, 50));
        root.put("cache_hit_rate", cacheHitRate());
        root.put("input_ids_forwarded", counters.forwarded());
        root.set("forwarding_outcomes", JSON.valueToTree(counters.forwardingOutcomes()));
        root.set("decision_reasons", JSON.valueToTree(counters.decisions()));
        root.put("tokenizer_cache_hit_rate", counters.tokenizerCacheHitRate());
        root.set("cache_index", JSON.valueToTree(counters.cacheIndex()));
        ObjectNode workersNode = root.putObject("per_worker");
        perWorker.forEach(workersNode::put);
        root.set("fleet", JSON.valueToTree(fleet));
        root.put("wall_s", wallNanos / 1e9);
        root.set("pressure_sources", JSON.valueToTree(counters.pressureSources()));
        root.set("tenants", JSON.valueToTree(tenantLines));
        root.set("lora_decisions", JSON.valueToTree(counters.loraDecisions()));
        if (pd != null) {
            com.fasterxml.jackson.databind.node.ObjectNode pdNode = root.putObject("pd");
            pdNode.put("requests", pd.requests);
            pdNode.put("errors", pd.errors);
            pdNode.put("ttft_p50_ms", ms(pd.ttftMicros, 50));
            pdNode.put("ttft_p95_ms", ms(pd.ttftMicros, 95));
            pdNode.put("continuations", pd.counters.continuations());
            pdNode.set("decision_reasons", JSON.valueToTree(pd.counters.decisions()));
        }
        return root.toString();
    }

    /** Thread-safe accumulator. */
    static final class Builder {
        private final String policy;
        private final int workers;
        private int requests;
        private int errors;
        private final Histogram ttftMicros = new Histogram(3);
        private final Histogram e2eMicros = new Histogram(3);
        private final Map<String, Integer> perWorker = new TreeMap<>();
        private long promptTokens;
        private long cachedTokens;
        private long wallNanos;
        private RouterCounters counters;
        private Map<String, String> fleet = Map.of();
        private final Map<String, Histogram> ttftByTenant = new TreeMap<>();
        private final Map<String, Integer> okByTenant = new TreeMap<>();

        /** One request of {@code tenant} (its label with its class); {@code firstByteNanos} 0 when not streamed. */
        synchronized void recordTenant(String tenant, boolean ok, long firstByteNanos) {
            if (!ok) {
                return;
            }
            okByTenant.merge(tenant, 1, Integer::sum);
            if (firstByteNanos > 0) {
                ttftByTenant.computeIfAbsent(tenant, t -> new Histogram(3)).recordValue(Math.max(1, firstByteNanos / 1000));
            }
        }

        synchronized void fleet(Map<String, String> facts) {
            fleet = Map.copyOf(facts);
        }

        synchronized void routerCounters(RouterCounters routerCounters) {
            counters = routerCounters;
        }

        Builder(String policy, int workers) {
            this.policy = policy;
            this.workers = workers;
        }

        synchronized void record(boolean ok, boolean stream, long firstByteNanos, long e2eNanos, String worker, JsonNode usage) {
            requests++;
            if (!ok) {
                errors++;
                return;
            }
            if (stream && firstByteNanos > 0) {
                ttftMicros.recordValue(Math.max(1, firstByteNanos / 1000));
            }
            e2eMicros.recordValue(Math.max(1, e2eNanos / 1000));
            perWorker.merge(worker, 1, Integer::sum);
            if (usage != null) {
                promptTokens += usage.path("prompt_tokens").asLong();
                cachedTokens += usage.path("prompt_tokens_details").path("cached_tokens").asLong();
            }
        }

        synchronized void wallNanos(long nanos) {
            wallNanos = nanos;
        }

        synchronized DemoSummary build() {
            return new DemoSummary(this);
        }
    }
}
