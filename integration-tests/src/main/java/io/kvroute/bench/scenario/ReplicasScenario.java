package io.kvroute.bench.scenario;

import io.kvroute.bench.Readiness;
import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.client.OpenLoopClient;
import io.kvroute.bench.client.RequestRecord;
import io.kvroute.bench.client.ScheduledRequest;
import io.kvroute.bench.fleet.Fleet;
import io.kvroute.bench.fleet.FleetSpec;
import io.kvroute.bench.stats.PrometheusText;
import io.kvroute.bench.workload.MultiTurnWorkload;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.plugin.RouterMain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@code replicas}: the multi-turn workload sent round-robin across N router replicas
 * (default 3, {@code -Dkvroute.replicas=N}) over one fleet of 4 mock workers, each replica running
 * {@code cache_aware}. Variants: {@code single} (1 replica, exact index), {@code replicas-approximate}
 * (N replicas, each with only its own prefix tree), {@code replicas-exact} (N replicas, all fed by
 * the engines' KV events) and {@code replicas-exact-failover} (as replicas-exact, but replica 2 is
 * killed halfway and its later requests go round-robin to the survivors), and {@code replicas-exact@vllm}
 * (replicas-exact over workers speaking vLLM's API, found through KV-event templates). Each replica is a full
 * router in this JVM; a request is sent to replica {@code i mod N} at its scheduled time.
 */
final class ReplicasScenario implements Scenario {
    static final List<String> VARIANTS = List.of("single", "replicas-approximate", "replicas-exact",
            "replicas-exact-failover", "replicas-exact" + Scenarios.VLLM_SUFFIX);
    private final TimeModelSpec time;

    ReplicasScenario(TimeModelSpec time) {
        this.time = time;
    }

    @Override
    public String name() {
        return "replicas";
    }

    @Override
    public List<String> variants() {
        return VARIANTS;
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
        return time.description();
    }

    @Override
    public String workloadDescription(boolean quick) {
        return workload(0, quick).description() + " Sent round-robin across " + replicas()
                + " router replicas (1 for single).";
    }

    private static int replicas() {
        return Integer.getInteger("kvroute.replicas", 3);
    }

    private io.kvroute.bench.workload.Workload workload(long seed, boolean quick) {
        return MultiTurnWorkload.generate(quick ? MultiTurnWorkload.Params.quick() : MultiTurnWorkload.Params.full(),
                new SplittableRandom(seed), Scenarios.CHARS_PER_TOKEN);
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        boolean vllm = variant.endsWith(Scenarios.VLLM_SUFFIX);
        int n = variant.equals("single") ? 1 : replicas();
        String index = variant.equals("replicas-approximate") ? "approximate" : "exact";
        List<String> routerArgs = List.of("--policy", "cache_aware", "--cache-index", index,
                "--health-check-interval-secs", "0.2");
        List<ScheduledRequest> schedule = workload(ctx.seed(), ctx.quick()).requests().stream()
                .map(r -> r.compressedBy(time.speedup())).toList();
        Duration timeout = ctx.quick() ? Scenarios.QUICK_TIMEOUT : Scenarios.FULL_TIMEOUT;
        try (Fleet fleet = ctx.fleets().start(new FleetSpec(4, vllm ? Scenarios.vllmWorkerArgs(time) : time.workerArgs(),
                routerArgs))) {
            List<String> urls = new ArrayList<>(List.of(fleet.routerUrl()));
            List<RouterMain.RunningRouter> extra = new ArrayList<>();
            try {
                for (int i = 1; i < n; i++) {
                    List<String> args = new ArrayList<>(List.of("--port", "0", "--worker-urls",
                            String.join(",", fleet.workerUrls()), "--tokenizer-path", BundledTokenizer.qwen3().toString()));
                    args.addAll(fleet.kvEventTemplateArgs());
                    args.addAll(routerArgs);
                    RouterMain.RunningRouter r = RouterMain.start(args.toArray(String[]::new));
                    extra.add(r);
                    urls.add(r.baseUrl());
                }
                if (!index.equals("approximate")) {
                    awaitExact(urls, fleet.workerUrls().size(), Duration.ofSeconds(30));
                }
                boolean failover = variant.endsWith("failover");
                long killAt = schedule.isEmpty() ? 0 : schedule.get(schedule.size() - 1).sendAtNanosFromStart() / 2;
                List<List<ScheduledRequest>> parts = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    parts.add(new ArrayList<>());
                }
                int after = 0;
                for (int i = 0; i < schedule.size(); i++) {
                    ScheduledRequest r = schedule.get(i);
                    int target = i % n;
                    if (failover && n > 2 && target == 2 && r.sendAtNanosFromStart() >= killAt) {
                        target = after++ % 2; // replica 2 is gone: its later requests go to the survivors
                    }
                    parts.get(target).add(r);
                }
                ExecutorService pool = Executors.newFixedThreadPool(n);
                ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
                try {
                    // unrecorded warm-up through every replica (class loading and JIT), prompts unrelated to the workload
                    for (String url : urls) {
                        try (OpenLoopClient client = new OpenLoopClient(new OpenLoopClient.Options(timeout, timeout, 64))) {
                            client.run(url, FleetWorkloadScenario.warmup(ctx.seed() + url.hashCode(),
                                    FleetWorkloadScenario.WARMUP_REQUESTS / n, FleetWorkloadScenario.WARMUP_PROMPT_TOKENS), r -> { });
                        }
                    }
                    long start = System.nanoTime();
                    if (failover && n > 2) {
                        killer.schedule(() -> extra.get(1).close(), killAt, TimeUnit.NANOSECONDS);
                    }
                    List<Future<List<RequestRecord>>> futures = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        String url = urls.get(i);
                        List<ScheduledRequest> part = parts.get(i);
                        futures.add(pool.submit(() -> {
                            try (OpenLoopClient client = new OpenLoopClient(new OpenLoopClient.Options(timeout, timeout, 4096))) {
                                return client.run(url, part, r -> { });
                            }
                        }));
                    }
                    List<RequestRecord> records = new ArrayList<>();
                    for (Future<List<RequestRecord>> f : futures) {
                        records.addAll(f.get());
                    }
                    long wall = System.nanoTime() - start;
                    List<PrometheusText.Sample> metrics = RouterMetricsScraper.scrape(urls.get(0));
                    Map<String, Double> reasons = RouterMetricsScraper.decisionReasons(metrics);
                    return VariantResult.of(variant, records, wall, reasons);
                } finally {
                    pool.shutdownNow();
                    killer.shutdownNow();
                }
            } finally {
                for (RouterMain.RunningRouter r : extra) {
                    try {
                        r.close();
                    } catch (RuntimeException e) {
                        // already closed by the failover drill
                    }
                }
            }
        }
    }

    /** Waits until every replica sees every worker's events live (exact), so no variant starts cold by accident. */
    private static void awaitExact(List<String> urls, int workers, Duration max) throws Exception {
        for (String url : urls) {
            // not ready in time: the variant still runs (its cold start then shows in its figures)
            Readiness.await(() -> RouterMetricsScraper.scrape(url).stream()
                    .filter(s -> s.name().equals("kvroute_kv_events_workers_exact"))
                    .mapToDouble(PrometheusText.Sample::value).findFirst().orElse(0) >= workers, max, Duration.ofMillis(100));
        }
    }
}
