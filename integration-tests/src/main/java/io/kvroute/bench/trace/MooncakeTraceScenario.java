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
import java.util.List;
import java.util.Locale;

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
 * <p>Besides the harness's report it writes {@code trace-report.md} and {@code trace-ttft.png}
 * (TTFT over trace time per arm), updated after every arm. Not thread-safe; arms run one after another.
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

    private final List<ArmSummary> done = new ArrayList<>();

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
                + " timestamps / speed. Parameters: --param trace=PATH requests=N speed=F workers=N kv-blocks=N max-output=N.";
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
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        TraceParams p = params(ctx.params(), ctx.quick());
        List<TraceRequest> trace = MooncakeTrace.read(p.trace(), p.requests());
        MooncakeTrace.Bound bound = MooncakeTrace.infiniteCacheBound(trace);
        List<ScheduledRequest> schedule = new ArrayList<>(trace.size());
        for (TraceRequest r : trace) {
            long at = Math.round(r.timestampMs() * 1_000_000.0 / p.speed());
            schedule.add(new ScheduledRequest(at, "/generate", body(r, p.maxOutputTokens()), ""));
        }
        List<String> routerArgs = new ArrayList<>(TraceArms.ROUTER_FLAGS.get(variant));
        routerArgs.addAll(List.of("--health-check-interval-secs", "0.2"));
        // input_ids carry the tokens: neither the router nor the workers need a tokenizer
        FleetSpec spec = new FleetSpec(p.workers(), 0, workerArgs(p), List.of(), routerArgs, false);
        long lastArrivalNanos = schedule.isEmpty() ? 0 : schedule.get(schedule.size() - 1).sendAtNanosFromStart();
        Duration timeout = Duration.ofNanos(lastArrivalNanos).plusMinutes(ctx.quick() ? 1 : 5);
        Fleet started;
        try {
            started = ctx.fleets().start(spec);
        } catch (RouterRejectedException e) {
            throw new VariantSkippedException(e.getMessage(), e);
        }
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try (Fleet fleet = started;
                OpenLoopClient client = new OpenLoopClient(new OpenLoopClient.Options(timeout, timeout, 4096));
                Progress progress = ctx.progress().start(NAME + "/" + variant, schedule.size())) {
            if (TraceArms.usesExactIndex(variant)) {
                // not ready in time: the arm still runs, and its cold start shows in its figures
                Readiness.await(() -> metric(http, fleet.routerUrl(), "kvroute_kv_events_workers_exact") >= p.workers(),
                        Duration.ofSeconds(30), Duration.ofMillis(100));
            }
            client.run(fleet.routerUrl(), warmup(p), r -> {});
            double[] before = prefillTokens(http, fleet.workerUrls());
            long startNanos = System.nanoTime();
            List<RequestRecord> records = client.run(fleet.routerUrl(), schedule, r -> progress.step());
            long wallNanos = System.nanoTime() - startNanos;
            double[] after = prefillTokens(http, fleet.workerUrls());
            for (int i = 0; i < after.length; i++) {
                after[i] -= before[i];
            }
            List<PrometheusText.Sample> metrics = PrometheusText.parse(get(http, fleet.routerUrl() + "/metrics"));
            java.util.Map<String, Double> reasons = PrometheusText.sumBy(metrics, "kvroute_policy_decisions_total", "reason");
            summarize(variant, trace, records, wallNanos, after, p, bound, ctx);
            return VariantResult.of(variant, records, wallNanos, reasons);
        }
    }

    private void summarize(String variant, List<TraceRequest> trace, List<RequestRecord> records, long wallNanos,
            double[] perWorker, TraceParams p, MooncakeTrace.Bound bound, RunContext ctx) throws IOException {
        List<ArmSummary.Outcome> outcomes = new ArrayList<>(records.size());
        for (RequestRecord r : records) {
            boolean ok = r.ok() && r.firstTokenNanos() >= 0;
            outcomes.add(new ArmSummary.Outcome(trace.get(r.index()).timestampMs() / p.speed(),
                    (r.firstTokenNanos() - r.scheduledNanos()) / 1e6, (r.endNanos() - r.scheduledNanos()) / 1e6,
                    r.promptTokens(), r.cachedTokens(), r.outputTokens(), ok));
        }
        done.removeIf(a -> a.arm().equals(variant));
        done.add(ArmSummary.of(variant, outcomes, wallNanos / 1e6, perWorker, Double.NaN));
        String heading = String.format(Locale.ROOT, "## mooncake-trace (real time)%n%n%s; %s", p.describe(), TIME.description());
        TraceReport.write(ctx.outDir().resolve("trace-report.md"), TraceReport.table(heading, done, bound));
        TraceReport.plot(ctx.outDir().resolve("trace-ttft.png"), "mooncake-trace: mean TTFT over trace time", done);
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
