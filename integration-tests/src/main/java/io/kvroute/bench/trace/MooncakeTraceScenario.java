package io.kvroute.bench.trace;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.bench.Readiness;
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
import io.kvroute.bench.scenario.TimeModelSpec;
import io.kvroute.bench.scenario.WorkerCounters;
import io.kvroute.bench.stats.PrometheusText;
import io.kvroute.bench.workload.ChatRequests;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code mooncake-trace}: replays a prefix of Mooncake's conversation trace in real time through the
 * real router (loopback HTTP) to mock GPU workers, one fresh fleet per arm ({@link TraceArms}).
 * Every request is an SGLang {@code /generate} with {@code input_ids} ({@link BlockTokens}), so the
 * router's tree, its KV-event index and the engines' prefix caches all see the trace's own sharing;
 * {@code max_new_tokens} is the trace's {@code output_length} (bounded). Arrivals keep the trace's
 * timestamps divided by the speed factor (its same-millisecond bursts stay bursts), open loop; TTFT
 * and end-to-end latency are timed from the intended send instant. The engines run at real time on
 * the {@code h100-small} preset with a finite KV pool evicted LRU (and published as KV events).
 *
 * <p>The arms run alternately in rounds ({@code --param rounds}, default 2, 1 with --quick): round k runs every
 * selected arm once, in the selected order rotated by k; the first {@link #run} call runs them all. Besides the
 * harness's report it writes {@code trace-report.md} (each arm pooled over its rounds, then each round, and the
 * engines' step time against their time model) and {@code trace-ttft.png} (TTFT over trace time per arm),
 * updated after every arm. Not thread-safe; arms run one after another.
 */
public final class MooncakeTraceScenario implements Scenario {

    static final String NAME = "mooncake-trace";

    /**
     * Full run: 1,200 requests (about 350 s of trace) at 4x, about 90 s of arrivals per arm. At 6x with
     * full-length answers the virtual-time replay of this slice overloaded round_robin (mean TTFT 6 s,
     * 1 % of requests refused after the engines' 20 s resource wait); 4x keeps every arm serving.
     */
    static final int FULL_REQUESTS = 1_200;
    static final double FULL_SPEED = 4.0;
    /**
     * --quick: the first 240 requests (70 s of trace) at 6x, answers cut to 32 tokens; the trace's reuse
     * grows with time (0.05 of tokens over the first 160, 0.08 over 300), so fewer leave too little to compare.
     */
    static final int QUICK_REQUESTS = 240;
    static final double QUICK_SPEED = 6.0;
    static final int QUICK_MAX_OUTPUT = 32;
    /** The trace's longest answer is 2,000 tokens; this bound never cuts it. */
    static final int FULL_MAX_OUTPUT = 2_048;
    static final int DEFAULT_WORKERS = 8;

    /**
     * The engine: the mock's {@code h100-small} preset (H100 80 GB serving Qwen3.5-0.8B: 25 ms per 1k
     * prefill tokens, 9 ms per decode step, 1 ms per step, 1,024-token steps; derivation in
     * docs/scheduler.md), at real time. It is the only preset in the mock calibrated against a measured
     * run on a named GPU and model. At 38k prefill tokens/s per worker, 8 workers have 7.5x the trace's
     * 41k input tokens/s of prefill, so the trace is sped up to load them.
     */
    static final TimeModelSpec TIME = TimeModelSpec.h100Small(1.0);

    /** Warm-up prompts (unrelated hash ids, unrecorded) per fleet before measuring. */
    static final int WARMUP_REQUESTS = 16;
    static final long WARMUP_ID_BASE = 1L << 40;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Rounds of a full run: every arm twice, the second time in another place of the order. */
    static final int FULL_ROUNDS = 2;
    static final int MAX_ROUNDS = 10;

    /**
     * One arm's measured replay on one fresh fleet.
     *
     * @param engineTimeRatio the engines' steps' time on the host clock over their time model's, summed over workers
     */
    private record ArmRun(String label, List<RequestRecord> records, long wallNanos, double[] prefillPerWorker,
            Map<String, Double> reasons, double engineTimeRatio) {}

    private List<String> planned;
    private boolean ran;
    private final Map<String, List<ArmRun>> runs = new LinkedHashMap<>();
    private final Map<String, String> skipped = new LinkedHashMap<>();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> variants() {
        return TraceArms.NAMES;
    }

    @Override
    public boolean hasClasses() {
        return false;
    }

    @Override
    public String timeModel(boolean quick) {
        return TIME.description();
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "Mooncake FAST'25 conversation trace, " + params(java.util.Map.of(), quick).describe()
                + "; SGLang /generate with input_ids (each hash id a fixed 512-token block), open loop at the trace's"
                + " timestamps / speed. Parameters: --param trace=PATH requests=N speed=F workers=N kv-blocks=N max-output=N"
                + " rounds=N (arms alternate, round k in the order rotated by k).";
    }

    static TraceParams params(java.util.Map<String, String> p, boolean quick) {
        return TraceParams.of(p, quick, quick ? QUICK_REQUESTS : FULL_REQUESTS, quick ? QUICK_SPEED : FULL_SPEED,
                DEFAULT_WORKERS, quick ? QUICK_MAX_OUTPUT : FULL_MAX_OUTPUT);
    }

    /** Worker flags: the time model, the KV pool, KV events and load reports on (their defaults). */
    static List<String> workerArgs(TraceParams p) {
        List<String> args = new ArrayList<>(TIME.workerArgs());
        args.addAll(List.of("--kv-capacity-tokens", Long.toString(p.kvCapacityTokens())));
        return args;
    }

    @Override
    public void plan(List<String> variants) {
        planned = List.copyOf(variants);
    }

    /**
     * The first call runs every planned arm, {@code rounds} times, alternately: round k runs the arms in the
     * planned order rotated by k, each on a fresh fleet, so a box that slows down over the run slows every arm
     * alike. Later calls return their pooled results.
     */
    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        if (!ran) {
            ran = true;
            runAll(ctx);
        }
        List<ArmRun> armRuns = runs.get(variant);
        if (armRuns == null || armRuns.isEmpty()) {
            throw new VariantSkippedException(skipped.getOrDefault(variant, "not planned"), null);
        }
        List<RequestRecord> records = new ArrayList<>();
        long wall = 0;
        Map<String, Double> reasons = new LinkedHashMap<>();
        for (ArmRun r : armRuns) {
            records.addAll(r.records());
            wall += r.wallNanos();
            r.reasons().forEach((k, v) -> reasons.merge(k, v, Double::sum));
        }
        return VariantResult.of(variant, records, wall, reasons);
    }

    static int rounds(Map<String, String> params, boolean quick) {
        return TraceParams.intParam(params, "rounds", quick ? 1 : FULL_ROUNDS, 1, MAX_ROUNDS);
    }

    private void runAll(RunContext ctx) throws Exception {
        TraceParams p = params(ctx.params(), ctx.quick());
        int rounds = rounds(ctx.params(), ctx.quick());
        List<String> arms = planned != null ? planned : TraceArms.NAMES;
        List<TraceRequest> trace = MooncakeTrace.read(p.trace(), p.requests());
        MooncakeTrace.Bound bound = MooncakeTrace.infiniteCacheBound(trace);
        List<ScheduledRequest> schedule = new ArrayList<>(trace.size());
        for (TraceRequest r : trace) {
            long at = Math.round(r.timestampMs() * 1_000_000.0 / p.speed());
            schedule.add(new ScheduledRequest(at, "/generate", body(r, p.maxOutputTokens()), ""));
        }
        List<String> order = runOrder(arms, rounds);
        for (int k = 0; k < order.size(); k++) {
            String arm = order.get(k);
            if (skipped.containsKey(arm)) {
                continue;
            }
            String label = rounds == 1 ? arm : arm + " (round " + (k / arms.size() + 1) + ")";
            try {
                runs.computeIfAbsent(arm, a -> new ArrayList<>()).add(runArm(arm, label, p, schedule, ctx));
            } catch (RouterRejectedException e) {
                skipped.put(arm, e.getMessage());
                continue;
            }
            summarize(trace, p, bound, rounds, ctx);
        }
    }

    /** Every arm once per round, round k in the given order rotated by k. */
    static List<String> runOrder(List<String> arms, int rounds) {
        List<String> order = new ArrayList<>(arms.size() * rounds);
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < arms.size(); i++) {
                order.add(arms.get((i + round) % arms.size()));
            }
        }
        return order;
    }

    /** One arm on a fresh fleet: warm-up, the measured replay, and the counters read around it. */
    private ArmRun runArm(String variant, String label, TraceParams p, List<ScheduledRequest> schedule, RunContext ctx)
            throws Exception {
        List<String> routerArgs = new ArrayList<>(TraceArms.ROUTER_FLAGS.get(variant));
        routerArgs.addAll(List.of("--health-check-interval-secs", "0.2"));
        // input_ids carry the tokens: neither the router nor the workers need a tokenizer
        FleetSpec spec = new FleetSpec(p.workers(), 0, workerArgs(p), List.of(), routerArgs, false);
        long lastArrivalNanos = schedule.isEmpty() ? 0 : schedule.get(schedule.size() - 1).sendAtNanosFromStart();
        Duration timeout = Duration.ofNanos(lastArrivalNanos).plusMinutes(ctx.quick() ? 1 : 5);
        Fleet started = ctx.fleets().start(spec);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try (Fleet fleet = started;
                OpenLoopClient client = new OpenLoopClient(new OpenLoopClient.Options(timeout, timeout, 4096));
                Progress progress = ctx.progress().start(NAME + "/" + label, schedule.size())) {
            if (TraceArms.usesExactIndex(variant)) {
                // not ready in time: the arm still runs, and its cold start shows in its figures
                Readiness.await(() -> metric(http, fleet.routerUrl(), "kvroute_kv_events_workers_exact") >= p.workers(),
                        Duration.ofSeconds(30), Duration.ofMillis(100));
            }
            client.run(fleet.routerUrl(), warmup(p), r -> {});
            double[] before = prefillTokens(http, fleet.workerUrls());
            double[] modelBefore = WorkerCounters.perWorker(http, fleet.workerUrls(), "step_model_micros");
            double[] wallBefore = WorkerCounters.perWorker(http, fleet.workerUrls(), "step_wall_micros");
            long startNanos = System.nanoTime();
            List<RequestRecord> records = client.run(fleet.routerUrl(), schedule, r -> progress.step());
            long wallNanos = System.nanoTime() - startNanos;
            double[] after = prefillTokens(http, fleet.workerUrls());
            for (int i = 0; i < after.length; i++) {
                after[i] -= before[i];
            }
            double engineTimeRatio = (sum(WorkerCounters.perWorker(http, fleet.workerUrls(), "step_wall_micros")) - sum(wallBefore))
                    / (sum(WorkerCounters.perWorker(http, fleet.workerUrls(), "step_model_micros")) - sum(modelBefore));
            List<PrometheusText.Sample> metrics = PrometheusText.parse(get(http, fleet.routerUrl() + "/metrics"));
            Map<String, Double> reasons = PrometheusText.sumBy(metrics, "kvroute_policy_decisions_total", "reason");
            return new ArmRun(label, records, wallNanos, after, reasons, engineTimeRatio);
        }
    }

    /** Rewrites trace-report.md and the plot: a row per arm pooled over its rounds, then one per round. */
    private void summarize(List<TraceRequest> trace, TraceParams p, MooncakeTrace.Bound bound, int rounds, RunContext ctx)
            throws IOException {
        List<ArmSummary> pooled = new ArrayList<>();
        List<ArmSummary> perRound = new ArrayList<>();
        StringBuilder engines = new StringBuilder();
        for (Map.Entry<String, List<ArmRun>> e : runs.entrySet()) {
            List<ArmSummary.Outcome> all = new ArrayList<>();
            double[] perWorker = new double[p.workers()];
            double wallMs = 0;
            for (ArmRun r : e.getValue()) {
                List<ArmSummary.Outcome> outcomes = outcomes(trace, r.records(), p);
                all.addAll(outcomes);
                for (int i = 0; i < perWorker.length; i++) {
                    perWorker[i] += r.prefillPerWorker()[i];
                }
                wallMs += r.wallNanos() / 1e6;
                perRound.add(ArmSummary.of(r.label(), outcomes, r.wallNanos() / 1e6, r.prefillPerWorker(), Double.NaN));
                engines.append(String.format(Locale.ROOT, "- %s: %.3f%n", r.label(), r.engineTimeRatio()));
            }
            pooled.add(ArmSummary.of(e.getKey(), all, wallMs, perWorker, Double.NaN));
        }
        List<ArmSummary> rows = new ArrayList<>(pooled);
        if (rounds > 1) {
            rows.addAll(perRound);
        }
        String heading = String.format(Locale.ROOT, "## mooncake-trace (real time)%n%n%s; %s; %d round(s), arms alternating"
                + " (round k runs them in the planned order rotated by k), pooled rows first", p.describe(), TIME.description(), rounds);
        String text = TraceReport.table(heading, rows, bound) + String.format(Locale.ROOT,
                "%nEngines' step time on the host clock / their time model's (1 = the engines ran at their model):%n%n")
                + engines;
        TraceReport.write(ctx.outDir().resolve("trace-report.md"), text);
        TraceReport.plot(ctx.outDir().resolve("trace-ttft.png"), "mooncake-trace: mean TTFT over trace time", pooled);
    }

    private static List<ArmSummary.Outcome> outcomes(List<TraceRequest> trace, List<RequestRecord> records, TraceParams p) {
        List<ArmSummary.Outcome> outcomes = new ArrayList<>(records.size());
        for (RequestRecord r : records) {
            boolean ok = r.ok() && r.firstTokenNanos() >= 0;
            outcomes.add(new ArmSummary.Outcome(trace.get(r.index()).timestampMs() / p.speed(),
                    (r.firstTokenNanos() - r.scheduledNanos()) / 1e6, (r.endNanos() - r.scheduledNanos()) / 1e6,
                    r.promptTokens(), r.cachedTokens(), r.outputTokens(), ok));
        }
        return outcomes;
    }

    private static double sum(double[] values) {
        double total = 0;
        for (double v : values) {
            total += v;
        }
        return total;
    }

    static byte[] body(TraceRequest r, int maxOutputTokens) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", ChatRequests.MODEL);
        ArrayNode ids = body.putArray("input_ids");
        for (int id : BlockTokens.prompt(r)) {
            ids.add(id);
        }
        ObjectNode sampling = body.putObject("sampling_params");
        sampling.put("max_new_tokens", Math.max(1, Math.min(maxOutputTokens, r.outputLength())));
        sampling.put("ignore_eos", true);
        body.put("stream", true);
        return body.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static List<ScheduledRequest> warmup(TraceParams p) {
        List<ScheduledRequest> out = new ArrayList<>();
        for (int i = 0; i < WARMUP_REQUESTS; i++) {
            long[] ids = {WARMUP_ID_BASE + 4L * i, WARMUP_ID_BASE + 4L * i + 1, WARMUP_ID_BASE + 4L * i + 2};
            out.add(new ScheduledRequest(i * 50_000_000L, "/generate",
                    body(new TraceRequest(0, 3 * BlockTokens.BLOCK_TOKENS, 8, ids), 8), ""));
        }
        return out;
    }

    /** Prefill tokens each worker's engine has computed ({@code processed_prefill_tokens} of GET /scheduler). */
    private static double[] prefillTokens(HttpClient http, List<String> workerUrls) throws Exception {
        return WorkerCounters.perWorker(http, workerUrls, "processed_prefill_tokens");
    }

    private static double metric(HttpClient http, String routerUrl, String name) throws Exception {
        return PrometheusText.parse(get(http, routerUrl + "/metrics")).stream().filter(s -> s.name().equals(name))
                .mapToDouble(PrometheusText.Sample::value).findFirst().orElse(0);
    }

    private static String get(HttpClient http, String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body();
    }
}
