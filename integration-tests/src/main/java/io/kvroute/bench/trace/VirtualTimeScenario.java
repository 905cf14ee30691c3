package io.kvroute.bench.trace;

import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.client.RequestRecord;
import io.kvroute.mock.engine.EngineConfig;
import io.kvroute.mock.engine.EngineLoop;
import io.kvroute.mock.engine.TimeModel;
import io.kvroute.router.kvevents.KvEventsConfig;
import io.kvroute.router.policy.CacheAwareConfig;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.policy.Policies;
import io.kvroute.router.policy.RoutingPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * {@code mooncake-trace-vt}: the trace replay of {@link MooncakeTraceScenario} in virtual time
 * ({@link VirtualFleetSim}) at several fleet sizes. The router's policies, prefix tree and block
 * index are the real classes, instantiated as libraries; the engines are the mock's own step loop
 * with the same configuration as the real-time workers. The arrival rate scales with the fleet: a
 * fleet of {@code n} workers replays {@code n / 8} copies of the trace slice merged by timestamp,
 * each copy with its hash ids moved past every other copy's (copies share no block), so every fleet
 * carries the same load per worker as the 8-worker one. The saturation-pin arm
 * ({@link TraceArms#CACHE_EXACT_PIN}: the exact arm with the real-time arm's queue limit and floor) is the
 * one arm whose engines publish load reports ({@link SimLoadReports}), which the router's queue gate and
 * pin read; the other arms see router-local in-flight counts only, as before the pin arm was simulated,
 * unless {@code load-reports=all} gives every arm's engines reports, as every real-time worker has.
 *
 * <p>Parameters as {@link MooncakeTraceScenario}'s ({@code trace}, {@code requests}, {@code speed},
 * {@code kv-blocks}, {@code max-output}) plus {@code fleets} (comma-separated worker counts, multiples
 * of 8), {@code load-reports} ({@code pin} or {@code all}) and {@code burst-seed} ({@link #burstSeed}). Writes {@code trace-vt-report.md}, one table per fleet size, updated after every arm.
 * Not thread-safe; arms run one after another.
 */
public final class VirtualTimeScenario implements Scenario {

    static final String NAME = "mooncake-trace-vt";

    static final List<String> ARMS = List.of(TraceArms.RANDOM, TraceArms.ROUND_ROBIN, TraceArms.POWER_OF_TWO,
            TraceArms.CACHE_APPROX, TraceArms.CACHE_EXACT, TraceArms.CACHE_EXACT_PIN);

    /** Workers per trace copy: the real-time fleet. */
    static final int BASE_WORKERS = 8;
    static final String FULL_FLEETS = "8,32,128,256";
    static final String QUICK_FLEETS = "8,16";
    /** --quick: the first 300 requests. */
    static final int QUICK_REQUESTS = 300;
    static final int MAX_FLEET = 4096;

    /** The router's default {@code --min-load-choices}. */
    static final int MIN_LOAD_CHOICES = 2;

    /** Model name of the exact index's block table (one model served). */
    static final String MODEL = "trace-model";

    private final Map<Integer, List<ArmSummary>> done = new LinkedHashMap<>();
    /** Per fleet size, per arm: decisions per reason and load reports sent, for the report. */
    private final Map<Integer, Map<String, VirtualFleetSim.Result>> decisions = new LinkedHashMap<>();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> variants() {
        return ARMS;
    }

    @Override
    public boolean hasClasses() {
        return false;
    }

    @Override
    public String timeModel(boolean quick) {
        return "virtual time (discrete-event): " + MooncakeTraceScenario.TIME.description();
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "Mooncake conversation trace in virtual time, fleets " + (quick ? QUICK_FLEETS : FULL_FLEETS)
                + " workers, n/8 trace copies with disjoint hash ids per fleet of n; " + params(Map.of(), quick).describe();
    }

    static TraceParams params(Map<String, String> p, boolean quick) {
        return TraceParams.of(p, quick, quick ? QUICK_REQUESTS : 0, MooncakeTraceScenario.FULL_SPEED, BASE_WORKERS,
                quick ? MooncakeTraceScenario.QUICK_MAX_OUTPUT : MooncakeTraceScenario.FULL_MAX_OUTPUT);
    }

    /**
     * {@code --param load-reports=pin} (default): only the pin arm's engines publish load reports;
     * {@code all}: every arm's do, as every real-time worker does (for comparing with a real-time run).
     */
    static boolean reportsForEveryArm(Map<String, String> p) {
        String v = p.getOrDefault("load-reports", "pin");
        return switch (v) {
            case "pin" -> false;
            case "all" -> true;
            default -> throw new IllegalArgumentException("--param load-reports must be pin or all: " + v);
        };
    }

    /**
     * {@code --param burst-seed=N}: replay each same-millisecond burst in an order drawn from seed N
     * ({@link MooncakeTrace#shuffleBursts}), as a real-time client delivers it; absent (default): trace
     * order. The bursts of the slice are shuffled before it is copied for larger fleets.
     */
    static Integer burstSeed(Map<String, String> p) {
        return p.containsKey("burst-seed") ? TraceParams.intParam(p, "burst-seed", 0, 0, Integer.MAX_VALUE) : null;
    }

    static List<Integer> fleets(Map<String, String> p, boolean quick) {
        String spec = p.getOrDefault("fleets", quick ? QUICK_FLEETS : FULL_FLEETS);
        List<Integer> out = new ArrayList<>();
        for (String part : spec.split(",")) {
            int n;
            try {
                n = Integer.parseInt(part.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--param fleets must list integers: " + spec, e);
            }
            if (n < BASE_WORKERS || n > MAX_FLEET || n % BASE_WORKERS != 0) {
                throw new IllegalArgumentException("--param fleets: each size must be a multiple of " + BASE_WORKERS
                        + " up to " + MAX_FLEET + ": " + n);
            }
            out.add(n);
        }
        return out;
    }

    /** The engine of every simulated worker: the real-time workers' flags as an {@link EngineConfig}. */
    static EngineConfig engineConfig(TraceParams p) {
        TimeModel t = TimeModel.h100Small();
        return EngineConfig.defaults().withTimeModel(t).withBudgets(1024, 1024, 256)
                .withKv(p.kvCapacityTokens(), 16).withEngineLoop(EngineLoop.LIGHTLLM);
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        TraceParams p = params(ctx.params(), ctx.quick());
        List<TraceRequest> base = MooncakeTrace.read(p.trace(), p.requests());
        List<TraceRequest> slice = new ArrayList<>(base.size());
        for (TraceRequest r : base) { // arrival times / speed, as in real time
            slice.add(new TraceRequest(Math.round(r.timestampMs() / p.speed()), r.inputLength(), r.outputLength(), r.hashIds()));
        }
        Integer burstSeed = burstSeed(ctx.params());
        if (burstSeed != null) {
            slice = MooncakeTrace.shuffleBursts(slice, burstSeed);
        }
        List<RequestRecord> firstFleetRecords = List.of();
        long firstFleetNanos = 0;
        Map<String, Double> firstFleetReasons = new LinkedHashMap<>();
        for (int fleet : fleets(ctx.params(), ctx.quick())) {
            List<TraceRequest> trace = MooncakeTrace.replicate(slice, fleet / BASE_WORKERS);
            long wallStart = System.nanoTime();
            VirtualFleetSim.Result result = simulate(variant, fleet, p, trace, ctx.seed(), reportsForEveryArm(ctx.params()));
            long wallNanos = System.nanoTime() - wallStart;
            ArmSummary summary = ArmSummary.of(variant, result.outcomes(), result.spanMs(), result.perWorkerPrefillTokens(),
                    result.decisionMicros());
            List<ArmSummary> arms = done.computeIfAbsent(fleet, k -> new ArrayList<>());
            arms.removeIf(a -> a.arm().equals(variant));
            arms.add(summary);
            decisions.computeIfAbsent(fleet, k -> new LinkedHashMap<>()).put(variant, withoutOutcomes(result));
            System.out.printf(Locale.ROOT, "%s %s: %d workers, %d requests in %.1f s wall%n", NAME, variant, fleet,
                    trace.size(), wallNanos / 1e9);
            if (firstFleetRecords.isEmpty()) {
                firstFleetRecords = records(result.outcomes());
                firstFleetNanos = (long) (result.spanMs() * 1e6);
                result.decisionReasons().forEach((reason, n) -> firstFleetReasons.put(reason, n.doubleValue()));
            }
            writeReport(p, ctx, base);
        }
        return VariantResult.of(variant, firstFleetRecords, firstFleetNanos, firstFleetReasons);
    }

    /** The figures of a run the report keeps once its outcomes are summarized. */
    private static VirtualFleetSim.Result withoutOutcomes(VirtualFleetSim.Result r) {
        return new VirtualFleetSim.Result(List.of(), r.spanMs(), r.perWorkerPrefillTokens(), r.decisionMicros(),
                r.decisionReasons(), r.loadReports());
    }

    /** Runs one arm on one fleet of simulated workers. */
    static VirtualFleetSim.Result simulate(String arm, int fleet, TraceParams p, List<TraceRequest> trace, long seed) {
        return simulate(arm, fleet, p, trace, seed, false);
    }

    /**
     * @param reportsForEveryArm whether every arm's engines publish load reports (as the real-time workers
     *     all do), not only the pin arm's
     */
    static VirtualFleetSim.Result simulate(String arm, int fleet, TraceParams p, List<TraceRequest> trace, long seed,
            boolean reportsForEveryArm) {
        SplittableRandom random = new SplittableRandom(seed);
        Supplier<RandomGenerator> randoms = () -> random;
        VirtualFleetSim[] sim = new VirtualFleetSim[1];
        LongSupplier ticks = () -> sim[0] == null ? 0 : sim[0].nowMillis();
        RoutingPolicy policy;
        SimExactIndex exact = null;
        switch (arm) {
            case TraceArms.RANDOM, TraceArms.ROUND_ROBIN, TraceArms.POWER_OF_TWO ->
                    policy = Policies.create(arm, MIN_LOAD_CHOICES, randoms);
            case TraceArms.CACHE_APPROX -> policy = Policies.cacheAware(CacheAwareConfig.defaults(), MIN_LOAD_CHOICES,
                    randoms, ticks);
            case TraceArms.CACHE_EXACT, TraceArms.CACHE_EXACT_PIN -> {
                CacheAwareConfig config = arm.equals(TraceArms.CACHE_EXACT_PIN)
                        ? CacheAwareConfig.defaults().withQueue(TraceArms.PIN_QUEUE_LIMIT, TraceArms.PIN_QUEUE_FLOOR)
                        : CacheAwareConfig.defaults();
                CacheAwarePolicy cache = Policies.cacheAware(config, MIN_LOAD_CHOICES, randoms, ticks);
                exact = new SimExactIndex(MODEL, 16, KvEventsConfig.defaults().maxBlocksPerRank());
                cache.useExactIndex(exact, true);
                policy = cache;
            }
            default -> throw new IllegalArgumentException("unknown arm " + arm + "; known: " + ARMS);
        }
        sim[0] = new VirtualFleetSim(fleet, engineConfig(p), policy, exact,
                reportsForEveryArm || arm.equals(TraceArms.CACHE_EXACT_PIN));
        return sim[0].run(trace, p.maxOutputTokens());
    }

    private void writeReport(TraceParams p, RunContext ctx, List<TraceRequest> base) throws Exception {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Integer, List<ArmSummary>> e : done.entrySet()) {
            MooncakeTrace.Bound bound = MooncakeTrace.infiniteCacheBound(base, e.getKey() / BASE_WORKERS);
            sb.append(TraceReport.table(String.format(Locale.ROOT, "### %d workers (%d trace copies)", e.getKey(),
                    e.getKey() / BASE_WORKERS), e.getValue(), bound)).append('\n');
            sb.append("Decisions by reason:\n\n");
            for (Map.Entry<String, VirtualFleetSim.Result> arm : decisions.get(e.getKey()).entrySet()) {
                sb.append(String.format(Locale.ROOT, "- %s: %s%s%n", arm.getKey(), arm.getValue().decisionReasons(),
                        arm.getValue().loadReports() == 0 ? ""
                                : String.format(Locale.ROOT, " (%,d load reports)", arm.getValue().loadReports())));
            }
            sb.append('\n');
        }
        Integer burstSeed = burstSeed(ctx.params());
        String heading = String.format(Locale.ROOT, "## mooncake-trace-vt (virtual time)%n%n%s; %s; bursts %s%n%n",
                p.describe(), timeModel(ctx.quick()), burstSeed == null ? "in trace order" : "shuffled, seed " + burstSeed);
        TraceReport.write(ctx.outDir().resolve("trace-vt-report.md"), heading + sb);
    }

    /** Outcomes as the harness's records (simulated nanoseconds from the run start). */
    private static List<RequestRecord> records(List<ArmSummary.Outcome> outcomes) {
        List<RequestRecord> out = new ArrayList<>(outcomes.size());
        for (int i = 0; i < outcomes.size(); i++) {
            ArmSummary.Outcome o = outcomes.get(i);
            long sent = (long) (o.traceTimeMs() * 1e6);
            long first = o.ok() ? sent + (long) (o.ttftMs() * 1e6) : -1;
            long end = o.ok() ? sent + (long) (o.e2eMs() * 1e6) : -1;
            out.add(new RequestRecord(i, "", "", sent, sent, sent, first, end, end, o.ok() ? 200 : 429,
                    o.ok() ? null : "engine rejected or aborted", o.outputTokens(), o.promptTokens(), o.cachedTokens()));
        }
        return out;
    }
}
