package io.kvroute.bench.fleet;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import io.kvroute.bench.workload.ChatRequests;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The production {@link FleetFactory}: mock GPU workers ({@link MockWorkerMain#start}) and the router
 * ({@link RouterMain#start}) in this JVM on ephemeral loopback ports, found through
 * {@code META-INF/services/io.kvroute.bench.fleet.FleetFactory}.
 *
 * <p>Every server serves model {@link ChatRequests#MODEL}. With {@link FleetSpec#realTokenizer()} both
 * the router and the workers load the bundled Qwen3 tokenizer (unpacked once per JVM). A PD fleet
 * starts prefill workers (each with its own bootstrap port) and decode workers, gives the router
 * {@code --prefill-urls}/{@code --decode-urls}, and returns only once the router has learned every
 * prefill worker's bootstrap port from {@code /server_info}. A router that rejects its flags
 * (unknown flag or policy) surfaces as {@link RouterRejectedException} after the workers are stopped.
 *
 * <p>Stateless and thread-safe; each {@link #start} returns an independent fleet.
 */
public final class InProcessFleetFactory implements FleetFactory {

    /** How long a PD router may take to learn the prefill bootstrap ports. */
    private static final long BOOTSTRAP_WAIT_MILLIS = 15_000;

    /** How long the router drains in-flight requests on close (the run is over by then). */
    private static final String SHUTDOWN_DRAIN_SECS = "1";

    /** Stand-in worker URL for {@link #preflightRouterArgs}; never contacted. */
    private static final String PREFLIGHT_URL = "http://127.0.0.1:9";

    /** Workers started at once: the tokenizer load is CPU-bound and the machine has 2 cores. */
    private static final int STARTUP_THREADS = 4;

    @Override
    public Fleet start(FleetSpec spec) throws Exception {
        preflightRouterArgs(spec);
        InProcessFleet fleet = new InProcessFleet();
        try {
            String tokenizer = spec.realTokenizer() ? BundledTokenizer.qwen3().toString() : null;
            List<List<String>> allArgs = new ArrayList<>();
            String primaryRole = spec.pd() ? "prefill" : "regular";
            for (int i = 0; i < spec.workers(); i++) {
                allArgs.add(workerArgs(primaryRole, tokenizer, spec.workerArgs()));
            }
            for (int i = 0; i < spec.decodeWorkers(); i++) {
                allArgs.add(workerArgs("decode", tokenizer, spec.decodeWorkerArgs()));
            }
            List<String> urls = fleet.startWorkers(allArgs);
            List<String> primaryUrls = urls.subList(0, spec.workers());
            List<String> decodeUrls = urls.subList(spec.workers(), urls.size());
            List<String> routerArgs = new ArrayList<>(List.of("--port", "0", "--shutdown-drain-secs", SHUTDOWN_DRAIN_SECS));
            if (spec.pd()) {
                routerArgs.addAll(List.of("--prefill-urls", String.join(",", primaryUrls),
                        "--decode-urls", String.join(",", decodeUrls), "--health-check-interval-secs", "0.2"));
            } else {
                routerArgs.addAll(List.of("--worker-urls", String.join(",", primaryUrls)));
            }
            if (tokenizer != null) {
                routerArgs.addAll(List.of("--tokenizer-path", tokenizer));
            }
            fleet.templateArgs = vllmTemplates(spec, fleet.workers);
            routerArgs.addAll(fleet.templateArgs);
            routerArgs.addAll(spec.routerArgs());
            try {
                fleet.router = RouterMain.start(routerArgs.toArray(String[]::new));
            } catch (ConfigException | IllegalArgumentException e) {
                throw new RouterRejectedException("router rejected " + spec.routerArgs() + ": " + e.getMessage(), e);
            }
            if (spec.pd()) {
                awaitBootstrapPorts(fleet);
            }
            return fleet;
        } catch (Exception | Error e) {
            fleet.close();
            throw e;
        }
    }

    /**
     * Parses the router's flags before any worker starts (starting four workers costs several seconds
     * of tokenizer loading), so a variant naming a flag or policy this build lacks is rejected at once.
     */
    private static void preflightRouterArgs(FleetSpec spec) throws RouterRejectedException {
        List<String> args = new ArrayList<>(List.of("--port", "0"));
        args.addAll(spec.pd()
                ? List.of("--prefill-urls", PREFLIGHT_URL, "--decode-urls", PREFLIGHT_URL)
                : List.of("--worker-urls", PREFLIGHT_URL));
        args.addAll(spec.routerArgs());
        try {
            RouterOptions.parse(args.toArray(String[]::new));
        } catch (ConfigException | IllegalArgumentException e) {
            throw new RouterRejectedException("router rejected " + spec.routerArgs() + ": " + e.getMessage(), e);
        }
    }

    private static List<String> workerArgs(String role, String tokenizer, List<String> extra) {
        List<String> args = new ArrayList<>(List.of("--port", "0", "--role", role, "--model-id", ChatRequests.MODEL));
        if (tokenizer != null) {
            args.addAll(List.of("--tokenizer-path", tokenizer));
        }
        args.addAll(extra);
        return args;
    }

    /**
     * vLLM-API workers serve no {@code /server_info}: the router finds their KV events through one
     * template per worker URL, built from the ports each worker bound. Empty for SGLang-API workers.
     */
    private static List<String> vllmTemplates(FleetSpec spec, List<MockWorkerMain.MockWorker> workers) {
        int api = spec.workerArgs().indexOf("--engine-api");
        if (api < 0 || api + 1 >= spec.workerArgs().size() || !spec.workerArgs().get(api + 1).equals("vllm")) {
            return List.of();
        }
        List<String> templates = new ArrayList<>();
        for (MockWorkerMain.MockWorker w : workers) {
            List<String> pub = w.kvEventEndpoints();
            List<String> replay = w.kvEventReplayEndpoints();
            if (pub.isEmpty()) {
                continue;
            }
            templates.add(w.baseUrl() + "=endpoint=tcp://*:" + java.net.URI.create(pub.get(0)).getPort()
                    + (replay.isEmpty() ? "" : ";replay-endpoint=tcp://*:" + java.net.URI.create(replay.get(0)).getPort())
                    + ";topic=kv;block-size=" + w.engine().info().pageSize() + ";dp-size=" + pub.size());
        }
        return templates.isEmpty() ? List.of() : List.of("--kv-events-worker-templates", String.join(",", templates));
    }

    private static void awaitBootstrapPorts(InProcessFleet fleet) throws InterruptedException {
        WorkerRegistry registry = fleet.router.router().workers();
        boolean learned = registry.awaitFleet(f -> {
            List<Worker> prefills = prefills(f);
            return !prefills.isEmpty() && prefills.stream().allMatch(w -> w.bootstrapPort() != null);
        }, java.time.Duration.ofMillis(BOOTSTRAP_WAIT_MILLIS));
        if (!learned) {
            throw new IllegalStateException("router did not learn the prefill bootstrap ports within "
                    + BOOTSTRAP_WAIT_MILLIS + " ms: " + prefills(registry.fleet()));
        }
    }

    private static List<Worker> prefills(WorkerRegistry.Fleet fleet) {
        return fleet.all().stream().filter(w -> w.role() == WorkerRole.PREFILL).toList();
    }

    /** Workers in start order, then the router; closes the router first. */
    private static final class InProcessFleet implements Fleet {
        private final List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        private RouterMain.RunningRouter router;
        private List<String> templateArgs = List.of();

        @Override
        public List<String> kvEventTemplateArgs() {
            return templateArgs;
        }

        /**
         * Starts the workers concurrently (each loads its own copy of the tokenizer, 1.5-3 s of CPU on
         * this machine) and returns their URLs in argument order; every started worker is kept for
         * {@link #close()} even when another fails.
         */
        List<String> startWorkers(List<List<String>> argsPerWorker) throws Exception {
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(argsPerWorker.size(), STARTUP_THREADS),
                    r -> new Thread(r, "bench-fleet-start"));
            try {
                List<Future<MockWorkerMain.MockWorker>> futures = new ArrayList<>();
                for (List<String> args : argsPerWorker) {
                    futures.add(pool.submit(() -> MockWorkerMain.start(args.toArray(String[]::new))));
                }
                Exception failure = null;
                for (Future<MockWorkerMain.MockWorker> f : futures) {
                    try {
                        workers.add(f.get());
                    } catch (ExecutionException e) {
                        failure = e.getCause() instanceof Exception cause ? cause : e;
                    }
                }
                if (failure != null) {
                    throw failure;
                }
                return workers.stream().map(MockWorkerMain.MockWorker::baseUrl).toList();
            } finally {
                pool.shutdown();
            }
        }

        @Override
        public String routerUrl() {
            return router.baseUrl();
        }

        @Override
        public List<String> workerUrls() {
            return workers.stream().map(MockWorkerMain.MockWorker::baseUrl).toList();
        }

        @Override
        public void close() {
            if (router != null) {
                try {
                    router.close();
                } catch (RuntimeException e) {
                    System.err.println("warning: router did not stop cleanly: " + e);
                }
            }
            for (MockWorkerMain.MockWorker worker : workers) {
                try {
                    worker.close();
                } catch (RuntimeException e) {
                    System.err.println("warning: mock worker did not stop cleanly: " + e);
                }
            }
        }
    }
}
