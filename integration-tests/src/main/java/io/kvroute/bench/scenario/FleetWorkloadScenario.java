package io.kvroute.bench.scenario;

import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.VariantSkippedException;
import io.kvroute.bench.stats.PrometheusText;
import io.kvroute.bench.client.OpenLoopClient;
import io.kvroute.bench.client.RequestRecord;
import io.kvroute.bench.client.ScheduledRequest;
import io.kvroute.bench.fleet.Fleet;
import io.kvroute.bench.fleet.FleetFactory;
import io.kvroute.bench.fleet.FleetSpec;
import io.kvroute.bench.fleet.RouterRejectedException;
import io.kvroute.bench.report.Progress;
import io.kvroute.bench.workload.ChatRequests;
import io.kvroute.bench.workload.PromptBuilder;
import io.kvroute.bench.workload.Workload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * A scenario that starts a fresh fleet per variant, replays one seeded workload through the
 * open-loop client and scrapes the router's decision counters. Before measuring, a few unrecorded
 * warm-up requests go through the fresh fleet (class loading and JIT otherwise land on the first
 * variant's first requests); the scraped decision counters therefore include them. Every variant sees the identical
 * workload (same seed), compressed by the time scale into wall time.
 *
 * <p>Not thread-safe; the harness runs variants one after another.
 */
public final class FleetWorkloadScenario implements Scenario {

    /** Builds the workload for (random, quick). */
    @FunctionalInterface
    public interface WorkloadGenerator {
        Workload generate(RandomGenerator random, boolean quick);
    }

    /** Builds the fleet for (variant, quick). */
    @FunctionalInterface
    public interface SpecForVariant {
        FleetSpec spec(String variant, boolean quick);
    }

    private final String name;
    private final List<String> variants;
    private final boolean hasClasses;
    private final WorkloadGenerator workload;
    private final SpecForVariant specs;
    private final TimeModelSpec fullTime;
    private final TimeModelSpec quickTime;
    private final Duration fullTimeout;
    private final Duration quickTimeout;
    private final FleetFactory fleetOverride;
    private final boolean reportsContinuations;
    private final int warmupRequests;
    private final int warmupPromptTokens;

    public FleetWorkloadScenario(String name, List<String> variants, boolean hasClasses, WorkloadGenerator workload,
            SpecForVariant specs, TimeModelSpec fullTime, TimeModelSpec quickTime, Duration fullTimeout,
            Duration quickTimeout) {
        this(name, variants, hasClasses, workload, specs, fullTime, quickTime, fullTimeout, quickTimeout, null);
    }

    /** As above, but always on fleets from {@code fleetOverride} (null: the run context's factory). */
    FleetWorkloadScenario(String name, List<String> variants, boolean hasClasses, WorkloadGenerator workload,
            SpecForVariant specs, TimeModelSpec fullTime, TimeModelSpec quickTime, Duration fullTimeout,
            Duration quickTimeout, FleetFactory fleetOverride) {
        this(name, variants, hasClasses, workload, specs, fullTime, quickTime, fullTimeout, quickTimeout, fleetOverride,
                false, WARMUP_REQUESTS, WARMUP_PROMPT_TOKENS);
    }

    private FleetWorkloadScenario(String name, List<String> variants, boolean hasClasses, WorkloadGenerator workload,
            SpecForVariant specs, TimeModelSpec fullTime, TimeModelSpec quickTime, Duration fullTimeout,
            Duration quickTimeout, FleetFactory fleetOverride, boolean reportsContinuations, int warmupRequests,
            int warmupPromptTokens) {
        this.fleetOverride = fleetOverride;
        this.reportsContinuations = reportsContinuations;
        this.warmupRequests = warmupRequests;
        this.warmupPromptTokens = warmupPromptTokens;
        this.name = Objects.requireNonNull(name, "name");
        this.variants = List.copyOf(variants);
        this.hasClasses = hasClasses;
        this.workload = Objects.requireNonNull(workload, "workload");
        this.specs = Objects.requireNonNull(specs, "specs");
        this.fullTime = Objects.requireNonNull(fullTime, "fullTime");
        this.quickTime = Objects.requireNonNull(quickTime, "quickTime");
        this.fullTimeout = Objects.requireNonNull(fullTimeout, "fullTimeout");
        this.quickTimeout = Objects.requireNonNull(quickTimeout, "quickTimeout");
    }

    /** The same scenario, also reporting the router's PD continuation segments (the {@code pd} scenario). */
    public FleetWorkloadScenario reportingContinuations() {
        return new FleetWorkloadScenario(name, variants, hasClasses, workload, specs, fullTime, quickTime, fullTimeout,
                quickTimeout, fleetOverride, true, warmupRequests, warmupPromptTokens);
    }

    /**
     * The same scenario with another warm-up: scenarios whose requests are much larger than the
     * default warm-up prompt (long-context) warm the large-body and big-JSON paths with prompts of
     * their own size, or the first variant pays their JIT compilation.
     */
    public FleetWorkloadScenario withWarmup(int requests, int promptTokens) {
        return new FleetWorkloadScenario(name, variants, hasClasses, workload, specs, fullTime, quickTime, fullTimeout,
                quickTimeout, fleetOverride, reportsContinuations, requests, promptTokens);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<String> variants() {
        return variants;
    }

    @Override
    public boolean hasClasses() {
        return hasClasses;
    }

    @Override
    public double timeScale(boolean quick) {
        return time(quick).speedup();
    }

    @Override
    public String timeModel(boolean quick) {
        return fleetOverride instanceof LoopbackFleetFactory
                ? "no engine: an in-process loopback stand-in streams canned tokens after fixed delays (real time)"
                : time(quick).description();
    }

    @Override
    public String workloadDescription(boolean quick) {
        String text = workload.generate(new SplittableRandom(0), quick).description();
        return quick ? text + " (--quick: scaled-down counts and prompt lengths.)" : text;
    }

    /** The workload for a seed, in simulated time (exposed for tests and the docs). */
    public Workload workload(long seed, boolean quick) {
        return workload.generate(new SplittableRandom(seed), quick);
    }

    /** The fleet a variant runs on. */
    public FleetSpec spec(String variant, boolean quick) {
        if (!variants.contains(variant)) {
            throw new IllegalArgumentException("unknown variant " + variant + " of " + name + "; known: " + variants);
        }
        return specs.spec(variant, quick);
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        FleetSpec spec = spec(variant, ctx.quick());
        double timeScale = timeScale(ctx.quick());
        List<ScheduledRequest> wallSchedule = workload(ctx.seed(), ctx.quick()).requests().stream()
                .map(r -> r.compressedBy(timeScale))
                .toList();
        Duration timeout = ctx.quick() ? quickTimeout : fullTimeout;
        OpenLoopClient.Options options = new OpenLoopClient.Options(timeout, timeout, 4096);
        Fleet started;
        try {
            started = (fleetOverride != null ? fleetOverride : ctx.fleets()).start(spec);
        } catch (RouterRejectedException e) {
            throw new VariantSkippedException(e.getMessage(), e);
        }
        try (Fleet fleet = started;
                OpenLoopClient client = new OpenLoopClient(options);
                Progress progress = ctx.progress().start(name + "/" + variant, wallSchedule.size())) {
            // unrecorded warm-up: the first requests through a fresh JVM/fleet pay class loading and JIT
            client.run(fleet.routerUrl(), warmup(ctx.seed(), warmupRequests, warmupPromptTokens), r -> {});
            long startNanos = System.nanoTime();
            List<RequestRecord> records = client.run(fleet.routerUrl(), wallSchedule, r -> progress.step());
            long wallNanos = System.nanoTime() - startNanos;
            List<PrometheusText.Sample> metrics = RouterMetricsScraper.scrape(fleet.routerUrl());
            Map<String, Double> reasons = RouterMetricsScraper.decisionReasons(metrics);
            Long continuations = reportsContinuations ? RouterMetricsScraper.continuations(metrics) : null;
            return new VariantResult(variant, records, wallNanos, reasons, continuations, List.of());
        }
    }

    /** Requests sent, unrecorded, before each variant's measurement; their prompts are unrelated to the workload. */
    static final int WARMUP_REQUESTS = 48;

    /** Prompt length of each warm-up request: big enough to exercise the large-body paths. */
    static final int WARMUP_PROMPT_TOKENS = 1024;

    static List<ScheduledRequest> warmup(long seed, int count, int promptTokens) {
        PromptBuilder prompts = new PromptBuilder(new SplittableRandom(~seed), Scenarios.CHARS_PER_TOKEN);
        List<ScheduledRequest> requests = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            requests.add(new ScheduledRequest(i * 1_000_000L, ChatRequests.PATH, ChatRequests.userPrompt(prompts.text(promptTokens), 4), "warmup"));
        }
        return requests;
    }

    private TimeModelSpec time(boolean quick) {
        return quick ? quickTime : fullTime;
    }
}
