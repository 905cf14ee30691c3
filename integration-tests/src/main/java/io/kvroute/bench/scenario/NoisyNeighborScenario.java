package io.kvroute.bench.scenario;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
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
import io.kvroute.bench.stats.PrometheusText;
import io.kvroute.bench.workload.ChatRequests;
import io.kvroute.bench.workload.NoisyNeighborWorkload;
import io.kvroute.bench.workload.NoisyNeighborWorkload.FairnessTenant;
import io.kvroute.bench.workload.PromptBuilder;
import io.kvroute.bench.workload.Workload;
import io.kvroute.router.tenant.PriorityClass;
import io.kvroute.router.tenant.QosListener;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The {@code noisy-neighbor} scenario: tenants sharing a KV-limited 4-worker fleet behind
 * {@code cache_aware}, with and without the router's QoS ({@code --tenants-file}, {@code --qos-*}), against an
 * isolated baseline; see {@link NoisyNeighborWorkload} for the tenants and docs/benchmarks.md for the figures.
 *
 * <p>Arms: {@code isolated} (full QoS, without the noisy and batch tenants), {@code no-qos} (no tenants file),
 * {@code vtc-no-locality} ({@code --qos-locality-slack-tokens 0}), {@code classes-only} (one tenant per class,
 * so within a class requests are served in arrival order), {@code full-qos} (default slack), and the fairness
 * sub-scenario {@code fairness} (four backlogged tenants, weights 1:1:2:4, full QoS); {@code rr-requests}
 * ({@code --qos-fairness requests --qos-locality-slack-tokens 0}) is round-robin fairness by request count;
 * {@code full-qos-engine-priority} is full QoS with {@code --qos-engine-priority} over workers that run
 * priority scheduling ({@code --enable-priority-scheduling}), so each engine serves its waiting requests
 * by class too; {@code full-qos-engine-priority-fleet} is the same with {@code --qos-capacity-scope fleet}
 * (one capacity pool over the fleet, as before per-worker capacity), to compare the two in one run.
 *
 * <p>The arms run alternately in one invocation: for each seed ({@code --seed}, then +1, ...) every selected
 * arm once, the order rotated by one per seed. The harness calls {@link #run} per variant; the first call runs
 * everything and the others return its results. Parameters ({@code --param}): {@code time-scale} (wall time
 * per simulated time: 0.25 runs the 240 s timeline in 60 s, the mock engine 4x faster; default 0.25, 1 with
 * --quick), {@code seeds} (default 3, 1 with --quick), {@code arms} (comma-separated, default all),
 * {@code holder-wait-ms} (the QoS arms' {@code --qos-holder-wait-ms} in simulated milliseconds, 0: off; default
 * {@link Shape#holderWaitMs}). The router's queue timeouts in the generated tenants file and the holder wait are
 * scaled with the time ({@link #wallMs}). Writes {@code noisy-neighbor.md} and {@code noisy-neighbor.json} to the
 * output directory, with the router's holder-wait outcomes and locality picks per arm and seed. Not thread-safe.
 */
final class NoisyNeighborScenario implements Scenario {

    static final String ISOLATED = "isolated";
    static final String NO_QOS = "no-qos";
    static final String VTC_NO_LOCALITY = "vtc-no-locality";
    static final String CLASSES_ONLY = "classes-only";
    static final String FULL_QOS = "full-qos";
    static final String FAIRNESS = "fairness";
    static final String RR_REQUESTS = "rr-requests";
    static final String FULL_QOS_ENGINE_PRIORITY = "full-qos-engine-priority";
    static final String FULL_QOS_ENGINE_PRIORITY_FLEET = "full-qos-engine-priority-fleet";
    static final List<String> ARMS = List.of(ISOLATED, NO_QOS, RR_REQUESTS, VTC_NO_LOCALITY, CLASSES_ONLY, FULL_QOS,
            FULL_QOS_ENGINE_PRIORITY, FULL_QOS_ENGINE_PRIORITY_FLEET, FAIRNESS);

    static final int WORKERS = 4;
    private static final double CHARS_PER_TOKEN = 4.0; // the mock's stand-in tokenizer: 4 bytes per token
    private static final String WARMUP_TENANT = "warmup";
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One run size. {@code kvTokens}: each worker's KV pool (room for the chat prefixes cache_aware places there
     * plus about two noisy prompts); {@code qosCapacityTokens}: {@code --qos-worker-capacity-tokens};
     * {@code holderWaitMs}: the default {@code --qos-holder-wait-ms}, simulated, chosen so that at the default time
     * scale the router gets its own default of 200 ms of wall time, as in the runs docs/benchmarks.md reports.
     */
    record Shape(NoisyNeighborWorkload.Params workload, int kvTokens, int qosCapacityTokens, long fairnessMs,
            long fairnessWindowMs, long recoveryBinMs, double defaultTimeScale, int defaultSeeds, long requestTimeoutMs,
            ClassTimes interactive, ClassTimes normal, ClassTimes batch, long holderWaitMs) {}

    /** A class's queue timeout and starvation threshold in the tenants file, simulated milliseconds. */
    record ClassTimes(long queueTimeoutMs, long starvationMs) {}

    /** The built-in class times (docs/tenants.md) except batch's, shortened to end within the client's timeout. */
    static final Shape FULL = new Shape(NoisyNeighborWorkload.Params.full(), 24_576, 12_288, 120_000, 60_000, 5_000,
            0.25, 3, 150_000, new ClassTimes(30_000, 5_000), new ClassTimes(60_000, 30_000), new ClassTimes(120_000, 60_000),
            800);
    /** --quick: the class times scaled down with the timeline, so a run's queued requests end within seconds. */
    static final Shape QUICK = new Shape(NoisyNeighborWorkload.Params.quick(), 6_144, 3_072, 6_000, 3_000, 1_000, 1.0, 1,
            10_000, new ClassTimes(2_000, 300), new ClassTimes(3_000, 1_500), new ClassTimes(4_000, 2_000), 200);

    /** TTFT SLO of chat, interactive and noisy requests for goodput (simulated seconds); batch has its own. */
    static final double SLO_TTFT_SEC = 2.0;
    static final double BATCH_SLO_TTFT_SEC = 60.0;

    /** Bounds {@code --qos-holder-wait-ms} (the router's own limit), in wall milliseconds. */
    static final long MAX_HOLDER_WAIT_WALL_MS = 60_000;

    /** One arm's run on one seed. */
    record Run(String arm, long seed, List<RequestRecord> records, long wallNanos, Map<String, Double> metrics,
            Map<String, Double> serviceByTenant) {}

    private final Map<String, List<Run>> runs = new LinkedHashMap<>();
    private boolean ran;

    @Override
    public String name() {
        return "noisy-neighbor";
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
    public double timeScale(boolean quick) {
        return 1.0 / (quick ? QUICK : FULL).defaultTimeScale();
    }

    @Override
    public String timeModel(boolean quick) {
        Shape s = quick ? QUICK : FULL;
        return time(1.0 / s.defaultTimeScale()).description() + " " + WORKERS + " workers, KV " + s.kvTokens()
                + " tokens each, the mock's stand-in tokenizer (4 bytes per token); QoS arms: --qos-worker-capacity-tokens "
                + s.qosCapacityTokens() + ". Another --param time-scale changes the speedup (noisy-neighbor.md states it).";
    }

    @Override
    public String workloadDescription(boolean quick) {
        Shape s = quick ? QUICK : FULL;
        return NoisyNeighborWorkload.generate(s.workload(), 0, true, CHARS_PER_TOKEN).description() + " "
                + NoisyNeighborWorkload.fairness(NoisyNeighborWorkload.fairnessTenants(quick),
                        s.workload().capacityTokensPerSec(), s.fairnessMs(), 0, CHARS_PER_TOKEN).description();
    }

    static TimeModelSpec time(double speedup) {
        // 400 ms per 1k prefill tokens (saturation's engine): 2,500 tokens/s per worker, C = 10,000 for four
        return new TimeModelSpec(400.0, 9.0, 1.0, speedup, 1024, 1024);
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        if (!ran) {
            ran = true;
            runAll(ctx);
        }
        List<Run> armRuns = runs.get(variant);
        if (armRuns == null || armRuns.isEmpty()) {
            throw new VariantSkippedException("not among --param arms (or its fleet did not start)", null);
        }
        List<RequestRecord> records = new ArrayList<>();
        long wall = 0;
        Map<String, Double> metrics = new LinkedHashMap<>();
        for (Run r : armRuns) {
            records.addAll(r.records());
            wall += r.wallNanos();
            r.metrics().forEach((k, v) -> metrics.merge(k, v, Double::sum));
        }
        return VariantResult.of(variant, records, wall, metrics);
    }

    private void runAll(RunContext ctx) throws Exception {
        Shape shape = ctx.quick() ? QUICK : FULL;
        double timeScale = Double.parseDouble(ctx.params().getOrDefault("time-scale", String.valueOf(shape.defaultTimeScale())));
        if (!(timeScale > 0 && timeScale <= 1)) {
            throw new IllegalArgumentException("--param time-scale must be in (0, 1]: " + timeScale);
        }
        int seeds = Integer.parseInt(ctx.params().getOrDefault("seeds", String.valueOf(shape.defaultSeeds())));
        if (seeds < 1 || seeds > 10) {
            throw new IllegalArgumentException("--param seeds must be within 1..10: " + seeds);
        }
        List<String> arms = new ArrayList<>();
        for (String a : ctx.params().getOrDefault("arms", String.join(",", ARMS)).split(",")) {
            if (!ARMS.contains(a.trim())) {
                throw new IllegalArgumentException("unknown arm '" + a + "'; known: " + ARMS);
            }
            arms.add(a.trim());
        }
        double speedup = 1.0 / timeScale;
        long holderWaitMs = Long.parseLong(ctx.params().getOrDefault("holder-wait-ms", String.valueOf(shape.holderWaitMs())));
        if (holderWaitMs < 0 || wallMs(holderWaitMs, speedup) > MAX_HOLDER_WAIT_WALL_MS) {
            throw new IllegalArgumentException("--param holder-wait-ms must be >= 0 and at most " + MAX_HOLDER_WAIT_WALL_MS
                    + " ms of wall time at time scale " + timeScale + ": " + holderWaitMs);
        }
        Files.createDirectories(ctx.outDir());
        Path tenants = ctx.outDir().resolve("noisy-neighbor-tenants.yaml");
        Path pooled = ctx.outDir().resolve("noisy-neighbor-tenants-pooled.yaml");
        Files.writeString(tenants, tenantsYaml(false, speedup, ctx.quick()));
        Files.writeString(pooled, tenantsYaml(true, speedup, ctx.quick()));
        ARMS.forEach(a -> runs.put(a, new ArrayList<>()));
        for (int i = 0; i < seeds; i++) {
            long seed = ctx.seed() + i;
            for (int k = 0; k < arms.size(); k++) {
                String arm = arms.get((k + i) % arms.size());
                Path file = arm.equals(CLASSES_ONLY) ? pooled : tenants;
                try {
                    runs.get(arm).add(runArm(arm, seed, shape, speedup, holderWaitMs, file, ctx));
                } catch (RouterRejectedException e) {
                    System.err.println("noisy-neighbor: arm " + arm + " not run: " + e.getMessage());
                }
            }
            writeReport(ctx.outDir(), shape, speedup, holderWaitMs, ctx.quick());
        }
    }

    /** {@code simulatedMs} of the timeline in wall milliseconds at {@code speedup} (rounded; 0 stays 0). */
    static long wallMs(long simulatedMs, double speedup) {
        return Math.round(simulatedMs / speedup);
    }

    /** {@code holderWaitMs}: the QoS arms' {@code --qos-holder-wait-ms}, simulated (fleet-wide capacity never waits). */
    FleetSpec spec(String arm, Shape shape, double speedup, long holderWaitMs, Path tenantsFile) {
        List<String> worker = new ArrayList<>(time(speedup).workerArgs());
        worker.addAll(List.of("--kv-capacity-tokens", String.valueOf(shape.kvTokens())));
        // the router keeps its own prefix tree (the stand-in tokenizer's ids are not the router's)
        List<String> router = new ArrayList<>(List.of("--policy", "cache_aware", "--cache-index", "approximate",
                "--health-check-interval-secs", "1"));
        if (!arm.equals(NO_QOS)) {
            router.addAll(List.of("--tenants-file", tenantsFile.toString(),
                    "--qos-worker-capacity-tokens", String.valueOf(shape.qosCapacityTokens()),
                    "--qos-holder-wait-ms", String.valueOf(wallMs(holderWaitMs, speedup))));
        }
        if (arm.equals(VTC_NO_LOCALITY)) {
            router.addAll(List.of("--qos-locality-slack-tokens", "0"));
        }
        if (arm.equals(RR_REQUESTS)) {
            router.addAll(List.of("--qos-fairness", "requests", "--qos-locality-slack-tokens", "0"));
        }
        if (arm.equals(FULL_QOS_ENGINE_PRIORITY) || arm.equals(FULL_QOS_ENGINE_PRIORITY_FLEET)) {
            router.addAll(List.of("--qos-engine-priority", "true"));
            worker.add("--enable-priority-scheduling");
        }
        if (arm.equals(FULL_QOS_ENGINE_PRIORITY_FLEET)) {
            router.addAll(List.of("--qos-capacity-scope", "fleet"));
        }
        return new FleetSpec(WORKERS, 0, worker, List.of(), router, false);
    }

    private Run runArm(String arm, long seed, Shape shape, double speedup, long holderWaitMs, Path tenantsFile,
            RunContext ctx) throws Exception {
        NoisyNeighborWorkload.Params p = shape.workload();
        Workload workload = arm.equals(FAIRNESS)
                ? NoisyNeighborWorkload.fairness(NoisyNeighborWorkload.fairnessTenants(ctx.quick()), p.capacityTokensPerSec(),
                        shape.fairnessMs(), seed, CHARS_PER_TOKEN)
                : NoisyNeighborWorkload.generate(p, seed, !arm.equals(ISOLATED), CHARS_PER_TOKEN);
        List<ScheduledRequest> schedule = workload.requests().stream().map(r -> r.compressedBy(speedup)).toList();
        long simMs = arm.equals(FAIRNESS) ? shape.fairnessMs() : p.durationMs();
        Duration requestTimeout = Duration.ofMillis((long) (shape.requestTimeoutMs() / speedup));
        Duration overall = Duration.ofMillis((long) ((simMs + shape.requestTimeoutMs()) / speedup) + 20_000);
        OpenLoopClient.Options options = new OpenLoopClient.Options(requestTimeout, overall, 4096);
        try (Fleet fleet = ctx.fleets().start(spec(arm, shape, speedup, holderWaitMs, tenantsFile));
                OpenLoopClient client = new OpenLoopClient(options);
                Progress progress = ctx.progress().start(name() + "/" + arm + "/seed " + seed, schedule.size())) {
            client.run(fleet.routerUrl(), warmup(seed), r -> {});
            List<PrometheusText.Sample> before = RouterMetricsScraper.scrape(fleet.routerUrl());
            double abortedPrefillBefore = WorkerCounters.sum(fleet.workerUrls(), "aborted_prefill_tokens");
            long start = System.nanoTime();
            List<RequestRecord> records = client.run(fleet.routerUrl(), schedule, r -> progress.step());
            long wall = System.nanoTime() - start;
            List<PrometheusText.Sample> after = RouterMetricsScraper.scrape(fleet.routerUrl());
            Map<String, Double> metrics = new LinkedHashMap<>();
            // prompt tokens the engines computed for requests aborted before their end (preempted, or the client
            // timed out): an upper bound of the prefill spent on requests that were later shed
            metrics.put("engine_aborted_prefill_tokens",
                    WorkerCounters.sum(fleet.workerUrls(), "aborted_prefill_tokens") - abortedPrefillBefore);
            delta(before, after, "kvroute_qos_shed_total", "reason").forEach((k, v) -> metrics.put("qos_shed_" + k, v));
            delta(before, after, "kvroute_qos_preempted_total", "class").forEach((k, v) -> metrics.put("qos_preempted_" + k, v));
            delta(before, after, "kvroute_qos_locality_picks_total", "class").forEach((k, v) -> metrics.put("qos_locality_picks_" + k, v));
            delta(before, after, "kvroute_qos_starvation_promotions_total", "class")
                    .forEach((k, v) -> metrics.put("qos_starvation_promotions_" + k, v));
            delta(before, after, HOLDER_WAITS_METRIC, "class", "outcome")
                    .forEach((k, v) -> metrics.put(HOLDER_WAITS_KEY + k, v));
            Map<String, Double> service = delta(before, after, "kvroute_qos_service_tokens_total", "tenant");
            delta(before, after, "kvroute_qos_service_refunded_tokens_total", "tenant")
                    .forEach((t, v) -> service.merge(t, -v, Double::sum));
            appendRecords(ctx.outDir().resolve("noisy-neighbor-records.csv"), arm, seed, records);
            return new Run(arm, seed, records, wall, metrics, service);
        }
    }

    /** Every record of the run, one CSV line each, so the figures can be recomputed after the run. */
    private static void appendRecords(Path csv, String arm, long seed, List<RequestRecord> records) throws java.io.IOException {
        StringBuilder out = new StringBuilder();
        if (!Files.exists(csv)) {
            out.append("arm,seed,index,class,tenant,scheduled_ns,sent_ns,first_token_ns,end_ns,status,prompt_tokens,"
                    + "cached_tokens,output_tokens,error\n");
        }
        for (RequestRecord r : records) {
            out.append(String.format(Locale.ROOT, "%s,%d,%d,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%s%n", arm, seed, r.index(),
                    r.requestClass(), r.tag(), r.scheduledNanos(), r.sentNanos(), r.firstTokenNanos(), r.endNanos(), r.status(),
                    r.promptTokens(), r.cachedTokens(), r.outputTokens(),
                    r.error() == null ? "" : '"' + r.error().replace('"', '\'').replace('\n', ' ') + '"'));
        }
        Files.writeString(csv, out, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    }

    /** The counters' increase over the run, by the values of {@code labels} joined by {@code _}. */
    private static Map<String, Double> delta(List<PrometheusText.Sample> before, List<PrometheusText.Sample> after,
            String metric, String... labels) {
        Map<String, Double> b = PrometheusText.sumBy(before, metric, labels);
        Map<String, Double> out = new LinkedHashMap<>();
        PrometheusText.sumBy(after, metric, labels).forEach((k, v) -> out.put(k, v - b.getOrDefault(k, 0.0)));
        return out;
    }

    static final String HOLDER_WAITS_METRIC = "kvroute_qos_holder_waits_total";
    /** Prefix of a run's metric keys {@code qos_holder_waits_<class>_<outcome>}. */
    static final String HOLDER_WAITS_KEY = "qos_holder_waits_";
    private static final List<String> HOLDER_WAIT_OUTCOMES = List.of(QosListener.HOLDER_WAIT_ON_HOLDER,
            QosListener.HOLDER_WAIT_BOUND_PASSED, QosListener.HOLDER_WAIT_GONE);

    /**
     * A run's holder waits as {@code class holder/bound_passed/gone} for each class that waited (highest class first),
     * or {@code -} when none did.
     */
    static String holderWaits(Map<String, Double> metrics) {
        StringBuilder s = new StringBuilder();
        PriorityClass[] lowToHigh = PriorityClass.values();
        for (int i = lowToHigh.length - 1; i >= 0; i--) {
            PriorityClass c = lowToHigh[i];
            String prefix = HOLDER_WAITS_KEY + c.label() + "_";
            double[] n = HOLDER_WAIT_OUTCOMES.stream().mapToDouble(o -> metrics.getOrDefault(prefix + o, 0.0)).toArray();
            if (n[0] + n[1] + n[2] > 0) {
                s.append(s.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%s %.0f/%.0f/%.0f", c.label(), n[0], n[1], n[2]));
            }
        }
        return s.isEmpty() ? "-" : s.toString();
    }

    /** 8 short requests of the warm-up tenant, 50 ms apart (JIT and connections; not recorded). */
    private static List<ScheduledRequest> warmup(long seed) {
        PromptBuilder prompts = new PromptBuilder(new SplittableRandom(~seed), CHARS_PER_TOKEN);
        List<ScheduledRequest> out = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            out.add(new ScheduledRequest(i * 50_000_000L, ChatRequests.PATH, ChatRequests.userPrompt(prompts.text(256), 4),
                    "warmup", "", NoisyNeighborWorkload.headers(WARMUP_TENANT, "default")));
        }
        return out;
    }

    /**
     * The tenants file: every tenant of the scenario by its key's digest, classes with the system class's
     * reservation off, 10 % reserved for interactive, default and batch, and queue timeouts and starvation
     * thresholds in simulated time scaled to wall time. {@code pooled} (classes-only): one tenant per class
     * holding the keys of all its tenants, so a class's queue is served in arrival order.
     */
    static String tenantsYaml(boolean pooled, double speedup, boolean quick) {
        Shape shape = quick ? QUICK : FULL;
        NoisyNeighborWorkload.Params p = shape.workload();
        List<String> chatKeys = new ArrayList<>();
        for (int i = 0; i < p.chatTenants(); i++) {
            chatKeys.add(NoisyNeighborWorkload.chatTenant(i));
        }
        StringBuilder y = new StringBuilder("# generated by the noisy-neighbor benchmark\ntenants:\n");
        tenant(y, WARMUP_TENANT, List.of(WARMUP_TENANT), 1, "default");
        if (pooled) {
            List<String> defaults = new ArrayList<>(chatKeys);
            defaults.add(NoisyNeighborWorkload.NOISY);
            tenant(y, "pool-default", defaults, 1, "default");
            tenant(y, "pool-interactive", List.of(NoisyNeighborWorkload.INTERACTIVE), 1, "interactive");
            tenant(y, "pool-batch", List.of(NoisyNeighborWorkload.BATCH), 1, "batch");
        } else {
            for (String chat : chatKeys) {
                tenant(y, chat, List.of(chat), 1, "default");
            }
            tenant(y, NoisyNeighborWorkload.NOISY, List.of(NoisyNeighborWorkload.NOISY), 1, "default");
            tenant(y, NoisyNeighborWorkload.INTERACTIVE, List.of(NoisyNeighborWorkload.INTERACTIVE), 1, "interactive");
            tenant(y, NoisyNeighborWorkload.BATCH, List.of(NoisyNeighborWorkload.BATCH), 1, "batch");
        }
        for (FairnessTenant t : NoisyNeighborWorkload.fairnessTenants(quick)) {
            tenant(y, t.name(), List.of(t.name()), t.weight(), "default");
        }
        y.append("classes:\n");
        y.append("  system: {reserved_share: 0}\n");
        y.append(classLine("interactive", shape.interactive(), speedup));
        y.append(classLine("default", shape.normal(), speedup));
        y.append(classLine("batch", shape.batch(), speedup));
        return y.toString();
    }

    private static String classLine(String name, ClassTimes times, double speedup) {
        return String.format(Locale.ROOT, "  %s: {reserved_share: 0.1, queue_timeout_ms: %d, starvation_ms: %d}%n", name,
                Math.max(1, wallMs(times.queueTimeoutMs(), speedup)), Math.max(1, wallMs(times.starvationMs(), speedup)));
    }

    private static void tenant(StringBuilder y, String name, List<String> keyTenants, double weight, String maxClass) {
        y.append("  - name: ").append(name).append('\n');
        y.append("    api_keys_sha256: [");
        for (int i = 0; i < keyTenants.size(); i++) {
            y.append(i == 0 ? "" : ", ").append(sha256(NoisyNeighborWorkload.apiKey(keyTenants.get(i))));
        }
        y.append("]\n");
        y.append(String.format(Locale.ROOT, "    weight: %s%n    max_class: %s%n", weight, maxClass));
    }

    private static String sha256(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    NoisyNeighborFigures.Frame frame(Shape shape, double speedup) {
        NoisyNeighborWorkload.Params p = shape.workload();
        return new NoisyNeighborFigures.Frame(speedup, p.noiseStartMs(), p.noiseEndMs(), p.durationMs(), shape.recoveryBinMs(),
                SLO_TTFT_SEC, BATCH_SLO_TTFT_SEC);
    }

    /** The arms' runs so far, for tests. */
    Map<String, List<Run>> runs() {
        return runs;
    }

    private void writeReport(Path outDir, Shape shape, double speedup, long holderWaitMs, boolean quick) throws Exception {
        NoisyNeighborFigures.Frame f = frame(shape, speedup);
        Map<Long, NoisyNeighborFigures> isolated = new LinkedHashMap<>();
        Map<Long, NoisyNeighborFigures> vtc = new LinkedHashMap<>();
        for (Run r : runs.get(ISOLATED)) {
            isolated.put(r.seed(), NoisyNeighborFigures.of(r.records(), f));
        }
        for (Run r : runs.get(VTC_NO_LOCALITY)) {
            vtc.put(r.seed(), NoisyNeighborFigures.of(r.records(), f));
        }
        StringBuilder md = new StringBuilder("# noisy-neighbor\n\n");
        md.append(String.format(Locale.ROOT, "Time scale %.3f (simulated %.0f s per arm in %.0f s of wall time, mock engine "
                + "speedup %.1f); TTFT from the intended send time, simulated seconds; SLO for goodput: TTFT <= %.1f s "
                + "(batch %.0f s); ratios against the isolated arm of the same seed; goodput ratio against vtc-no-locality of "
                + "the same seed. QoS arms' holder wait (--qos-holder-wait-ms) %d ms simulated, %d ms of wall time.%n%n",
                1 / speedup, f.durationMs() / 1e3, f.durationMs() / 1e3 / speedup, speedup, SLO_TTFT_SEC, BATCH_SLO_TTFT_SEC,
                holderWaitMs, wallMs(holderWaitMs, speedup)));
        md.append("| arm | seed | requests | chat TTFT p99 noise s | x isolated | chat shed | chat hit noise | x isolated "
                + "| interactive TTFT p99 s | x isolated | batch share | goodput tok/s | x vtc-no-loc | recovery s | cut | failed "
                + "| noisy shed | batch shed | preempted | locality picks | holder waits | aborted prefill tok |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
        ObjectNode json = JSON.createObjectNode();
        json.put("time_scale", 1 / speedup);
        json.put("holder_wait_ms_simulated", holderWaitMs);
        json.put("holder_wait_ms_wall", wallMs(holderWaitMs, speedup));
        ObjectNode armsJson = json.putObject("arms");
        for (String arm : ARMS) {
            if (arm.equals(FAIRNESS)) {
                continue;
            }
            ArrayNode armJson = armsJson.putArray(arm);
            for (Run r : runs.get(arm)) {
                NoisyNeighborFigures x = NoisyNeighborFigures.of(r.records(), f);
                NoisyNeighborFigures iso = isolated.get(r.seed());
                NoisyNeighborFigures v = vtc.get(r.seed());
                double ttftRatio = iso == null ? Double.NaN : x.chatTtftP99NoiseSec() / iso.chatTtftP99NoiseSec();
                double hitRatio = iso == null ? Double.NaN : x.chatHitRateNoise() / iso.chatHitRateNoise();
                double interRatio = iso == null ? Double.NaN : x.interactiveTtftP99Sec() / iso.interactiveTtftP99Sec();
                double goodRatio = v == null ? Double.NaN : x.goodputTokensPerSec() / v.goodputTokensPerSec();
                double recovery = iso == null || arm.equals(ISOLATED) ? Double.NaN : x.recoverySec(iso, 1.1, f);
                double preempted = sumPrefix(r.metrics(), "qos_preempted_");
                double picks = sumPrefix(r.metrics(), "qos_locality_picks_");
                md.append(String.format(Locale.ROOT, "| %s | %d | %d | %s | %s | %d | %s | %s | %s | %s | %s | %.0f | %s | %s "
                        + "| %d | %d | %d | %d | %.0f | %.0f | %s | %.0f |%n", arm, r.seed(), x.requests(), num(x.chatTtftP99NoiseSec(), 2),
                        num(ttftRatio, 2), x.chatShed(), num(x.chatHitRateNoise(), 3), num(hitRatio, 2),
                        num(x.interactiveTtftP99Sec(), 2), num(interRatio, 2), num(x.batchServiceShare(), 3),
                        x.goodputTokensPerSec(), num(goodRatio, 2), num(recovery, 0), x.cutAfterFirstByte(), x.failed(),
                        x.noisyShed(), x.batchShed(), preempted, picks, holderWaits(r.metrics()),
                        r.metrics().getOrDefault("engine_aborted_prefill_tokens", Double.NaN)));
                ObjectNode n = armJson.addObject();
                n.put("seed", r.seed());
                n.put("requests", x.requests());
                n.put("chat_ttft_p99_noise_s", x.chatTtftP99NoiseSec());
                n.put("chat_ttft_p99_noise_vs_isolated", ttftRatio);
                n.put("chat_shed", x.chatShed());
                n.put("chat_hit_rate_noise", x.chatHitRateNoise());
                n.put("chat_hit_rate_noise_vs_isolated", hitRatio);
                n.put("interactive_ttft_p99_s", x.interactiveTtftP99Sec());
                n.put("interactive_ttft_p99_vs_isolated", interRatio);
                n.put("batch_service_share", x.batchServiceShare());
                n.put("goodput_tokens_per_s", x.goodputTokensPerSec());
                n.put("goodput_vs_vtc_no_locality", goodRatio);
                n.put("recovery_s", recovery);
                n.put("chat_ttft_p90_quiet_s", x.chatTtftP90QuietSec());
                n.put("cut_after_first_byte", x.cutAfterFirstByte());
                n.put("failed", x.failed());
                n.put("noisy_shed", x.noisyShed());
                n.put("batch_shed", x.batchShed());
                n.put("wall_s", r.wallNanos() / 1e9);
                r.metrics().forEach(n::put);
                ObjectNode errors = n.putObject("errors");
                errorCounts(r.records()).forEach(errors::put);
            }
        }
        md.append("\n`inf`: more than 1 % of the requests in the set did not succeed (their TTFT counts as infinite); "
                + "recovery `inf`: the last 5 s bin still above 1.1x isolated. Aborted prefill: prompt tokens the engines "
                + "computed for requests aborted before their end (preempted, or the client timed out), from the workers' "
                + "/scheduler counters. Holder waits: requests of each class that waited for their prefix holder, by how "
                + "the wait ended, holder/bound_passed/gone (admitted on the holder / admitted elsewhere after the bound / "
                + "refused or client gone), from the router's kvroute_qos_holder_waits_total; locality picks from "
                + "kvroute_qos_locality_picks_total, all classes.\n\n");
        fairnessReport(md, armsJson.putArray(FAIRNESS), speedup, shape, quick);
        Files.writeString(outDir.resolve("noisy-neighbor.md"), md.toString());
        Files.writeString(outDir.resolve("noisy-neighbor.json"), json.toPrettyString());
        System.out.print(md);
    }

    private void fairnessReport(StringBuilder md, ArrayNode json, double speedup, Shape shape, boolean quick) {
        if (runs.get(FAIRNESS).isEmpty()) {
            return;
        }
        Map<String, Double> weights = new LinkedHashMap<>();
        NoisyNeighborWorkload.fairnessTenants(quick).forEach(t -> weights.put(t.name(), t.weight()));
        md.append("## fairness (weights ").append(weights).append(")\n\n");
        md.append("Service = uncached input + 0.1 x cached input + output of successful requests (client, by end time) "
                + "and the router's `kvroute_qos_service_tokens_total` minus refunds; Jain's index on service / weight per "
                + (shape.fairnessWindowMs() / 1000) + " s window.\n\n");
        md.append("| seed | client shares | router shares | max share error (client) | max share error (router) | Jain per window |\n");
        md.append("|---:|---|---|---:|---:|---|\n");
        for (Run r : runs.get(FAIRNESS)) {
            NoisyNeighborFigures.Fairness c = NoisyNeighborFigures.Fairness.of(r.records(), weights, speedup,
                    shape.fairnessMs(), shape.fairnessWindowMs());
            NoisyNeighborFigures.Fairness router = NoisyNeighborFigures.Fairness.fromTotals(r.serviceByTenant(), weights, List.of());
            md.append(String.format(Locale.ROOT, "| %d | %s | %s | %.3f | %.3f | %s |%n", r.seed(), shares(c.shares()),
                    shares(router.shares()), c.maxShareErrorRelative(), router.maxShareErrorRelative(),
                    Arrays.toString(c.jainPerWindow().stream().mapToDouble(d -> Math.round(d * 10000) / 10000.0).toArray())));
            ObjectNode n = json.addObject();
            n.put("seed", r.seed());
            c.shares().forEach((t, v) -> n.put("client_share_" + t, v));
            router.shares().forEach((t, v) -> n.put("router_share_" + t, v));
            r.serviceByTenant().forEach((t, v) -> n.put("router_service_" + t, v));
            n.put("max_share_error_client", c.maxShareErrorRelative());
            n.put("max_share_error_router", router.maxShareErrorRelative());
            ArrayNode jain = n.putArray("jain_per_window");
            c.jainPerWindow().forEach(jain::add);
            n.put("requests", r.records().size());
            n.put("shed", r.records().stream().filter(NoisyNeighborFigures::shed).count());
            n.put("failed", r.records().stream().filter(x -> !x.ok() && !NoisyNeighborFigures.shed(x)).count());
        }
        md.append('\n');
    }

    /** Unsuccessful requests other than refusals, by error text (cut to 80 characters) and request class. */
    static Map<String, Long> errorCounts(List<RequestRecord> records) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        for (RequestRecord r : records) {
            if (!r.ok() && !NoisyNeighborFigures.shed(r)) {
                String e = String.valueOf(r.error());
                String key = r.requestClass() + (r.firstTokenNanos() >= 0 ? " after first token: " : ": ")
                        + e.substring(0, Math.min(80, e.length()));
                counts.merge(key, 1L, Long::sum);
            }
        }
        return counts;
    }

    private static String shares(Map<String, Double> shares) {
        StringBuilder s = new StringBuilder();
        shares.forEach((t, v) -> s.append(s.isEmpty() ? "" : ", ").append(t).append(' ').append(num(v, 3)));
        return s.toString();
    }

    private static double sumPrefix(Map<String, Double> metrics, String prefix) {
        return metrics.entrySet().stream().filter(e -> e.getKey().startsWith(prefix)).mapToDouble(Map.Entry::getValue).sum();
    }

    private static String num(double v, int decimals) {
        if (Double.isNaN(v)) {
            return "-";
        }
        if (Double.isInfinite(v)) {
            return "inf";
        }
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }
}
