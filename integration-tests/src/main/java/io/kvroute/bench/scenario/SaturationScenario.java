package io.kvroute.bench.scenario;

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
import io.kvroute.bench.report.Charts;
import io.kvroute.bench.report.Progress;
import io.kvroute.bench.stats.LatencySummary;
import io.kvroute.bench.stats.PrometheusText;
import io.kvroute.bench.workload.SaturationWorkload;
import io.kvroute.bench.workload.Workload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The {@code saturation} scenario: a stepped Poisson arrival rate against a KV-constrained fleet
 * behind {@code cache_aware}, one fleet per variant (the admission gate and its saturation floor).
 * On top of what {@link FleetWorkloadScenario} reports it scrapes the router's decision counters at
 * every step boundary (wall clock, from the start of the measured run), so each step gets its own
 * decision counts, and writes {@code saturation-steps.md} (per step and variant: hit rate, TTFT
 * p50/p95, {@code saturation_pin} and other decisions) plus {@code steps-hit-rate.png} into the
 * output directory, rewritten after each variant.
 *
 * <p>Step boundaries are by send time; a request sent just before a boundary may be routed just
 * after it, so per-step decision counts can be off by the few requests in flight at a boundary. The
 * warm-up's decisions are excluded (the first scrape is taken after it). Not thread-safe; the
 * harness runs variants one after another.
 */
final class SaturationScenario implements Scenario {

    static final String CACHE_AWARE_METRIC = "kvroute_cache_aware_decisions_total";

    /** One step's figures for one variant. */
    record StepRow(String step, double offeredReqPerSec, int ok, int failed, double hitRate, double ttftP50Ms,
            double ttftP95Ms, Map<String, Double> reasons, double cacheAwarePins) {}

    private final Map<String, List<String>> variants;
    private final List<String> variantOrder;
    private final SaturationWorkload.Params full;
    private final SaturationWorkload.Params quick;
    private final TimeModelSpec time;
    private final List<String> extraWorkerArgs;
    private final Duration timeout;
    private final int warmupRequests;
    private final Map<String, List<StepRow>> rowsByVariant = new LinkedHashMap<>();

    SaturationScenario(Map<String, List<String>> variants, SaturationWorkload.Params full,
            SaturationWorkload.Params quick, TimeModelSpec time, List<String> extraWorkerArgs, Duration timeout,
            int warmupRequests) {
        this.variants = Map.copyOf(variants);
        this.variantOrder = List.copyOf(variants.keySet());
        this.full = full;
        this.quick = quick;
        this.time = time;
        this.extraWorkerArgs = List.copyOf(extraWorkerArgs);
        this.timeout = timeout;
        this.warmupRequests = warmupRequests;
    }

    @Override
    public String name() {
        return "saturation";
    }

    @Override
    public List<String> variants() {
        return variantOrder;
    }

    @Override
    public boolean hasClasses() {
        return false;
    }

    @Override
    public double timeScale(boolean quick) {
        return time.speedup();
    }

    @Override
    public String timeModel(boolean quick) {
        return time.description() + " Worker KV capacity: " + String.join(" ", extraWorkerArgs) + ".";
    }

    @Override
    public String workloadDescription(boolean quick) {
        String text = workload(0, quick).description();
        return quick ? text + " (--quick: shorter steps.)" : text;
    }

    Workload workload(long seed, boolean quick) {
        return SaturationWorkload.generate(quick ? this.quick : full, new SplittableRandom(seed), Scenarios.CHARS_PER_TOKEN);
    }

    FleetSpec spec(String variant) {
        List<String> worker = new ArrayList<>(time.workerArgs());
        worker.addAll(extraWorkerArgs);
        // calibrated on the router's own prefix tree (docs/benchmarks.md, saturation); with the engines' KV
        // events (--cache-index auto, the default) the --quick smoke run saw no pin: owners
        // follow the engines' evictions there. Kept on the tree until recalibrated.
        List<String> router = new ArrayList<>(List.of("--policy", "cache_aware", "--cache-index", "approximate"));
        router.addAll(variants.get(variant));
        return new FleetSpec(4, worker, router);
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        if (!variants.containsKey(variant)) {
            throw new IllegalArgumentException("unknown variant " + variant + "; known: " + variantOrder);
        }
        SaturationWorkload.Params params = ctx.quick() ? quick : full;
        List<ScheduledRequest> schedule = workload(ctx.seed(), ctx.quick()).requests().stream()
                .map(r -> r.compressedBy(time.speedup())).toList();
        int steps = params.rateMultipliers().size();
        long stepWallNanos = (long) (params.stepMillis() * 1_000_000L / time.speedup());
        OpenLoopClient.Options options = new OpenLoopClient.Options(timeout, timeout, 4096);
        Fleet started;
        try {
            started = ctx.fleets().start(spec(variant));
        } catch (RouterRejectedException e) {
            throw new VariantSkippedException(e.getMessage(), e);
        }
        ScheduledExecutorService scraper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "saturation-step-scraper");
            t.setDaemon(true);
            return t;
        });
        try (Fleet fleet = started;
                OpenLoopClient client = new OpenLoopClient(options);
                Progress progress = ctx.progress().start(name() + "/" + variant, schedule.size())) {
            client.run(fleet.routerUrl(), FleetWorkloadScenario.warmup(ctx.seed(), warmupRequests,
                    FleetWorkloadScenario.WARMUP_PROMPT_TOKENS), r -> {});
            // snapshots[k] = counters at the start of step k+1; snapshots[steps] = after the run
            List<List<PrometheusText.Sample>> snapshots = new ArrayList<>();
            snapshots.add(RouterMetricsScraper.scrape(fleet.routerUrl()));
            List<java.util.concurrent.ScheduledFuture<List<PrometheusText.Sample>>> boundaries = new ArrayList<>();
            long startNanos = System.nanoTime();
            for (int k = 1; k < steps; k++) {
                boundaries.add(scraper.schedule(() -> RouterMetricsScraper.scrape(fleet.routerUrl()),
                        k * stepWallNanos, TimeUnit.NANOSECONDS));
            }
            List<RequestRecord> records = client.run(fleet.routerUrl(), schedule, r -> progress.step());
            long wallNanos = System.nanoTime() - startNanos;
            for (var b : boundaries) {
                snapshots.add(b.get());
            }
            List<PrometheusText.Sample> last = RouterMetricsScraper.scrape(fleet.routerUrl());
            snapshots.add(last);
            recordSteps(variant, params, records, snapshots);
            writeStepReport(ctx.outDir());
            return new VariantResult(variant, records, wallNanos, RouterMetricsScraper.decisionReasons(last), null,
                    List.of());
        } finally {
            scraper.shutdownNow();
        }
    }

    private void recordSteps(String variant, SaturationWorkload.Params params, List<RequestRecord> records,
            List<List<PrometheusText.Sample>> snapshots) {
        Map<String, List<RequestRecord>> byTag = new LinkedHashMap<>();
        List<RequestRecord> ordered = new ArrayList<>(records);
        ordered.sort((a, b) -> Long.compare(a.scheduledNanos(), b.scheduledNanos()));
        ordered.forEach(r -> byTag.computeIfAbsent(r.tag(), k -> new ArrayList<>()).add(r));
        List<StepRow> rows = new ArrayList<>();
        int k = 0;
        for (Map.Entry<String, List<RequestRecord>> e : byTag.entrySet()) {
            List<RequestRecord> rs = e.getValue();
            long prompt = 0;
            long cached = 0;
            int ok = 0;
            for (RequestRecord r : rs) {
                if (r.ok()) {
                    ok++;
                    prompt += r.promptTokens();
                    cached += r.cachedTokens();
                }
            }
            LatencySummary latency = LatencySummary.of(rs, time.speedup());
            Map<String, Double> reasons = delta(RouterMetricsScraper.decisionReasons(snapshots.get(k + 1)),
                    RouterMetricsScraper.decisionReasons(snapshots.get(k)));
            double pins = delta(PrometheusText.sumBy(snapshots.get(k + 1), CACHE_AWARE_METRIC, "decision"),
                    PrometheusText.sumBy(snapshots.get(k), CACHE_AWARE_METRIC, "decision"))
                    .getOrDefault("saturation_pin", 0.0);
            rows.add(new StepRow(e.getKey(), params.capacityReqPerSec() * params.rateMultipliers().get(k), ok,
                    rs.size() - ok, prompt == 0 ? Double.NaN : (double) cached / prompt, latency.ttftP50Ms(),
                    latency.ttftP95Ms(), reasons, pins));
            k++;
        }
        rowsByVariant.put(variant, rows);
    }

    private static Map<String, Double> delta(Map<String, Double> after, Map<String, Double> before) {
        Map<String, Double> d = new LinkedHashMap<>();
        after.forEach((key, v) -> {
            double x = v - before.getOrDefault(key, 0.0);
            if (x != 0) {
                d.put(key, x);
            }
        });
        return d;
    }

    private void writeStepReport(Path outDir) throws IOException {
        Files.createDirectories(outDir);
        TreeSet<String> reasons = new TreeSet<>();
        rowsByVariant.values().forEach(rows -> rows.forEach(r -> reasons.addAll(r.reasons().keySet())));
        StringBuilder md = new StringBuilder("# saturation: per step\n\n");
        md.append("Decision counts are router counter deltas between step boundaries (warm-up excluded); ")
                .append("`pins (cache_aware)` = `").append(CACHE_AWARE_METRIC).append("{decision=\"saturation_pin\"}`.\n\n");
        md.append("| step | offered req/s | variant | ok | failed | hit rate | TTFT p50 ms | TTFT p95 ms | pins (cache_aware) |");
        reasons.forEach(r -> md.append(' ').append(r).append(" |"));
        md.append("\n|---|---:|---|---:|---:|---:|---:|---:|---:|");
        reasons.forEach(r -> md.append("---:|"));
        md.append('\n');
        int steps = rowsByVariant.values().stream().mapToInt(List::size).max().orElse(0);
        for (int k = 0; k < steps; k++) {
            for (Map.Entry<String, List<StepRow>> e : rowsByVariant.entrySet()) {
                if (k >= e.getValue().size()) {
                    continue;
                }
                StepRow r = e.getValue().get(k);
                md.append(String.format(Locale.ROOT, "| %s | %.1f | %s | %d | %d | %.3f | %.0f | %.0f | %.0f |", r.step(),
                        r.offeredReqPerSec(), e.getKey(), r.ok(), r.failed(), r.hitRate(), r.ttftP50Ms(), r.ttftP95Ms(),
                        r.cacheAwarePins()));
                reasons.forEach(reason -> md.append(String.format(Locale.ROOT, " %.0f |",
                        r.reasons().getOrDefault(reason, 0.0))));
                md.append('\n');
            }
        }
        Files.writeString(outDir.resolve("saturation-steps.md"), md.toString());
        Map<String, List<Charts.Point>> series = new LinkedHashMap<>();
        rowsByVariant.forEach((variant, rows) -> series.put(variant,
                rows.stream().map(r -> new Charts.Point(r.offeredReqPerSec(), r.hitRate())).toList()));
        Charts.lines(outDir.resolve("steps-hit-rate.png"), "saturation: prefix-cache hit rate per step",
                "offered rate (req/s)", "hit rate (cached / prompt tokens)", series);
        System.out.print(md);
    }
}
