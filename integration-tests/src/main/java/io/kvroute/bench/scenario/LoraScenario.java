package io.kvroute.bench.scenario;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.VariantSkippedException;
import io.kvroute.bench.client.OpenLoopClient;
import io.kvroute.bench.client.RequestRecord;
import io.kvroute.bench.client.ScheduledRequest;
import io.kvroute.bench.fleet.Fleet;
import io.kvroute.bench.fleet.FleetSpec;
import io.kvroute.bench.fleet.RouterRejectedException;
import io.kvroute.bench.report.Progress;
import io.kvroute.bench.stats.LatencySummary;
import io.kvroute.bench.stats.PrometheusText;
import io.kvroute.bench.workload.ChatRequests;
import io.kvroute.bench.workload.LoraWorkload;
import io.kvroute.bench.workload.PromptBuilder;
import io.kvroute.bench.workload.Workload;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The {@code lora} scenario: multi-turn chats over many LoRA adapters ({@link LoraWorkload}) on mock
 * workers with adapter slots ({@code --max-loras}, a load latency), behind {@code cache_aware}, in three
 * arms: {@code adapter-blind} ({@code --lora-affinity-weight 0}: adapter requests placed as any other; every
 * worker serves every adapter), {@code adapter-aware} (residency and load decide together; every worker
 * serves every adapter) and {@code adapter-aware+loading} (workers start with no adapter; the router loads
 * catalogue adapters where placement puts them).
 *
 * <p>Besides the harness's TTFT, hit rate and failures it counts adapter loads: the workers' slot loads
 * ({@code /debug/lora} {@code loads}, vLLM's swap of an adapter into a GPU slot, and the router's load
 * requests in the third arm) during the measured run, per 1,000 requests, and the router's
 * {@code kvroute_lora_decisions_total} by outcome. Before measuring, each variant sends one request per
 * adapter (sequentially, unrecorded), so adapters are in slots as in a fleet that has been running, then the
 * harness's base-model warm-up. Writes {@code lora-arms.md} and {@code lora-arms.json} to the output
 * directory. Real time (the load latency is wall-clock). Not thread-safe; the harness runs variants one
 * after another.
 */
final class LoraScenario implements Scenario {

    static final String BLIND = "adapter-blind";
    static final String AWARE = "adapter-aware";
    static final String LOADING = "adapter-aware+loading";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Fleet shape and timing of one run size. */
    record Shape(LoraWorkload.Params workload, int workers, int slots, int loadMs, Duration timeout,
            int minMatchedTokens) {}

    static final Shape FULL = new Shape(LoraWorkload.Params.full(), 8, 4, 300, Duration.ofMinutes(5), 256);
    static final Shape QUICK = new Shape(LoraWorkload.Params.quick(), 4, 2, 100, Duration.ofSeconds(30), 64);

    /** One arm's figures. */
    record ArmRow(String arm, int requests, int failed, double ttftP50Ms, double ttftP99Ms, double loadsPer1k,
            long loads, double hitRate, Map<String, Double> loraDecisions) {}

    private final TimeModelSpec time;
    private final Map<String, ArmRow> rows = new LinkedHashMap<>();

    LoraScenario(TimeModelSpec time) {
        this.time = time;
    }

    @Override
    public String name() {
        return "lora";
    }

    @Override
    public List<String> variants() {
        return List.of(BLIND, AWARE, LOADING);
    }

    @Override
    public boolean hasClasses() {
        return false;
    }

    @Override
    public String timeModel(boolean quick) {
        Shape s = quick ? QUICK : FULL;
        return time.description() + " Workers: " + s.workers() + " x " + s.slots() + " adapter slots, "
                + s.loadMs() + " ms per adapter load (vLLM API, --max-loras).";
    }

    @Override
    public String workloadDescription(boolean quick) {
        String text = LoraWorkload.generate((quick ? QUICK : FULL).workload(), new SplittableRandom(0),
                Scenarios.CHARS_PER_TOKEN).description();
        return quick ? text + " (--quick: fewer adapters, workers, slots and sessions; 100 ms loads.)" : text;
    }

    FleetSpec spec(String variant, Shape s) {
        List<String> worker = new ArrayList<>(time.workerArgs());
        // vLLM-like workers: KV events in vLLM's shape (adapter blocks with their real token ids and lora_name),
        // hashes seeded per process, the real tokenizer on both sides
        worker.addAll(List.of("--engine-api", "vllm", "--kv-events-hash-seed", "random", "--max-loras",
                String.valueOf(s.slots()), "--lora-load-ms", String.valueOf(s.loadMs())));
        List<String> catalogue = new ArrayList<>();
        for (int k = 0; k < s.workload().adapters(); k++) {
            catalogue.add(LoraWorkload.adapter(k) + "=/loras/" + LoraWorkload.adapter(k));
        }
        // the exact KV index, as a vLLM fleet runs it (blocks keyed by the events' tokens and lora_name)
        // a session's later turns share its instruction + document (several hundred tokens; ~150 in --quick): the
        // threshold makes them prefix hits in every arm, the adapter-blind one included, and stays above the
        // adapter instruction sessions share
        List<String> router = new ArrayList<>(List.of("--policy", "cache_aware", "--cache-index", "exact",
                "--engine-type", "vllm", "--health-check-interval-secs", "1", "--cache-affinity-min-matched-tokens",
                String.valueOf(s.minMatchedTokens())));
        switch (variant) {
            case BLIND -> {
                worker.addAll(List.of("--lora-modules", String.join(",", catalogue)));
                router.addAll(List.of("--lora-affinity-weight", "0"));
            }
            case AWARE -> worker.addAll(List.of("--lora-modules", String.join(",", catalogue)));
            case LOADING -> {
                worker.add("--lora-runtime-updating");
                router.addAll(List.of("--lora-dynamic-loading", "--lora-adapter", String.join(",", catalogue)));
            }
            default -> throw new IllegalArgumentException("unknown variant " + variant + "; known: " + variants());
        }
        return new FleetSpec(s.workers(), 0, worker, List.of(), router, true);
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        Shape shape = ctx.quick() ? QUICK : FULL;
        Workload workload = LoraWorkload.generate(shape.workload(), new SplittableRandom(ctx.seed()),
                Scenarios.CHARS_PER_TOKEN);
        List<ScheduledRequest> schedule = workload.requests();
        OpenLoopClient.Options options = new OpenLoopClient.Options(shape.timeout(), shape.timeout(), 4096);
        Fleet started;
        try {
            started = ctx.fleets().start(spec(variant, shape));
        } catch (RouterRejectedException e) {
            throw new VariantSkippedException(e.getMessage(), e);
        }
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try (Fleet fleet = started;
                OpenLoopClient client = new OpenLoopClient(options);
                Progress progress = ctx.progress().start(name() + "/" + variant, schedule.size())) {
            awaitAdaptersKnown(http, fleet, variant, shape);
            client.run(fleet.routerUrl(), primeAdapters(ctx.seed(), shape), r -> {});
            client.run(fleet.routerUrl(), FleetWorkloadScenario.warmup(ctx.seed(), FleetWorkloadScenario.WARMUP_REQUESTS,
                    FleetWorkloadScenario.WARMUP_PROMPT_TOKENS), r -> {});
            long loadsBefore = workerLoads(http, fleet);
            Map<String, Double> decisionsBefore = loraDecisions(fleet.routerUrl());
            long start = System.nanoTime();
            List<RequestRecord> records = client.run(fleet.routerUrl(), schedule, r -> progress.step());
            long wallNanos = System.nanoTime() - start;
            long loads = workerLoads(http, fleet) - loadsBefore;
            List<PrometheusText.Sample> last = RouterMetricsScraper.scrape(fleet.routerUrl());
            Map<String, Double> decisions = new LinkedHashMap<>();
            PrometheusText.sumBy(last, "kvroute_lora_decisions_total", "outcome").forEach((outcome, v) ->
                    decisions.put(outcome, v - decisionsBefore.getOrDefault(outcome, 0.0)));
            record(variant, records, loads, decisions);
            writeReport(ctx.outDir());
            Map<String, Double> reasons = new LinkedHashMap<>(RouterMetricsScraper.decisionReasons(last));
            decisions.forEach((outcome, v) -> reasons.put("lora_" + outcome, v));
            return new VariantResult(variant, records, wallNanos, reasons, null, List.of());
        }
    }

    /** Waits until the router lists every adapter (or, with dynamic loading, until the workers are up). */
    private static void awaitAdaptersKnown(HttpClient http, Fleet fleet, String variant, Shape shape) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String last = LoraWorkload.adapter(shape.workload().adapters() - 1);
        while (System.nanoTime() < deadline) {
            String models = get(http, fleet.routerUrl() + "/v1/models");
            if (variant.equals(LOADING) ? models.contains(ChatRequests.MODEL) : models.contains("\"" + last + "\"")) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the router did not learn the workers' adapters within 60 s");
    }

    /** One short request per adapter, 100 ms apart, so each is in a slot before measuring (unrecorded). */
    private static List<ScheduledRequest> primeAdapters(long seed, Shape shape) {
        PromptBuilder prompts = new PromptBuilder(new SplittableRandom(~seed), Scenarios.CHARS_PER_TOKEN);
        List<ScheduledRequest> out = new ArrayList<>();
        for (int k = 0; k < shape.workload().adapters(); k++) {
            out.add(new ScheduledRequest(k * 100_000_000L, ChatRequests.PATH, ChatRequests.body(LoraWorkload.adapter(k),
                    List.of(new ChatRequests.Message("user", prompts.text(16))), 1, null), "warmup"));
        }
        return out;
    }

    private static long workerLoads(HttpClient http, Fleet fleet) throws Exception {
        long sum = 0;
        for (String url : fleet.workerUrls()) {
            sum += JSON.readTree(get(http, url + "/debug/lora")).path("loads").asLong();
        }
        return sum;
    }

    private static Map<String, Double> loraDecisions(String routerUrl) {
        return PrometheusText.sumBy(RouterMetricsScraper.scrape(routerUrl), "kvroute_lora_decisions_total", "outcome");
    }

    private static String get(HttpClient http, String url) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body();
    }

    private void record(String variant, List<RequestRecord> records, long loads, Map<String, Double> decisions) {
        long prompt = 0;
        long cached = 0;
        int ok = 0;
        for (RequestRecord r : records) {
            if (r.ok()) {
                ok++;
                prompt += r.promptTokens();
                cached += r.cachedTokens();
            }
        }
        LatencySummary latency = LatencySummary.of(records, 1.0);
        rows.put(variant, new ArmRow(variant, records.size(), records.size() - ok, latency.ttftP50Ms(),
                latency.ttftP99Ms(), records.isEmpty() ? Double.NaN : 1000.0 * loads / records.size(), loads,
                prompt == 0 ? Double.NaN : (double) cached / prompt, decisions));
    }

    /** The arms so far, for tests. */
    Map<String, ArmRow> rows() {
        return Map.copyOf(rows);
    }

    private void writeReport(Path outDir) throws IOException {
        Files.createDirectories(outDir);
        StringBuilder md = new StringBuilder("# lora: arms\n\n");
        md.append("Adapter loads = the workers' slot loads during the measured run (after one priming request per ")
                .append("adapter); decisions = `kvroute_lora_decisions_total` deltas.\n\n");
        md.append("| arm | requests | failed | TTFT p50 ms | TTFT p99 ms | adapter loads / 1k req | loads | hit rate "
                + "| resident | loaded | waiting | miss |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        ObjectNode json = JSON.createObjectNode();
        for (ArmRow r : rows.values()) {
            md.append(String.format(Locale.ROOT, "| %s | %d | %d | %.0f | %.0f | %.1f | %d | %.3f | %.0f | %.0f | %.0f | %.0f |%n",
                    r.arm(), r.requests(), r.failed(), r.ttftP50Ms(), r.ttftP99Ms(), r.loadsPer1k(), r.loads(),
                    r.hitRate(), r.loraDecisions().getOrDefault("resident", 0.0),
                    r.loraDecisions().getOrDefault("loaded", 0.0), r.loraDecisions().getOrDefault("waiting", 0.0),
                    r.loraDecisions().getOrDefault("miss", 0.0)));
            ObjectNode n = json.putObject(r.arm());
            n.put("requests", r.requests());
            n.put("failed", r.failed());
            n.put("ttft_p50_ms", r.ttftP50Ms());
            n.put("ttft_p99_ms", r.ttftP99Ms());
            n.put("adapter_loads", r.loads());
            n.put("adapter_loads_per_1k", r.loadsPer1k());
            n.put("hit_rate", r.hitRate());
            r.loraDecisions().forEach((k, v) -> n.put("decisions_" + k, v));
        }
        Files.writeString(outDir.resolve("lora-arms.md"), md.toString());
        Files.writeString(outDir.resolve("lora-arms.json"), json.toPrettyString());
        System.out.print(md);
    }
}
