package io.kvroute.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;

/** One demo run: start the fleet, drive the workload with bounded concurrency, collect results. */
final class DemoRun {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final int workers;
    private final int requests;
    private final int concurrency;
    private final int tenants;
    private final String policy;
    private final int maxTokens;
    private final long seed;
    private final int pdRequests;

    DemoRun(int workers, int requests, int concurrency, int tenants, String policy, int maxTokens, long seed, int pdRequests) {
        this.pdRequests = pdRequests;
        this.workers = workers;
        this.requests = requests;
        this.concurrency = concurrency;
        this.tenants = tenants;
        this.policy = policy;
        this.maxTokens = maxTokens;
        this.seed = seed;
    }

    /** Phase 1: the plain fleet. Phase 2: a prefill/decode fleet with continuation segments. */
    DemoSummary execute(PrintStream log) throws Exception {
        HttpClient client = new HttpClient();
        client.setMaxConnectionsPerDestination(concurrency * 2);
        client.start();
        try {
            String tokenizer = BundledTokenizer.qwen3().toString();
            DemoSummary plain = runPlain(client, tokenizer, log);
            if (pdRequests > 0) {
                plain.pd(runPd(client, tokenizer, log));
            }
            return plain;
        } finally {
            client.stop();
        }
    }

    private List<String> workerArgs(String tokenizer, String... extra) {
        List<String> args = new ArrayList<>(List.of("--port", "0", "--prefill-ms-per-1k", "20", "--decode-ms-per-step", "4",
                "--prefill-queue-strategy", "hrrn", "--tokenizer-path", tokenizer));
        args.addAll(List.of(extra));
        return args;
    }

    private DemoSummary runPlain(HttpClient client, String tokenizer, PrintStream log) throws Exception {
        List<MockWorkerMain.MockWorker> fleet = new ArrayList<>();
        RouterMain.RunningRouter router = null;
        try {
            List<String> urls = new ArrayList<>();
            int vllm = workers / 2; // the second half of the fleet speaks vLLM's API: load from /metrics, no ids on chat
            for (int i = 0; i < workers; i++) {
                // the vLLM-style half also serves one LoRA adapter in 2 slots (vLLM --max-loras, --lora-modules)
                // every engine runs priority scheduling (each with its own engine's flag), so the tenants' classes
                // order the engines' queues as well as the router's (--qos-engine-priority)
                String[] args = i < workers - vllm ? workerArgs(tokenizer, "--enable-priority-scheduling").toArray(String[]::new)
                        : workerArgs(tokenizer, "--engine-api", "vllm", "--scheduling-policy", "priority", "--max-loras", "2",
                                "--lora-modules", DemoWorkload.ADAPTER + "=/loras/" + DemoWorkload.ADAPTER).toArray(String[]::new);
                MockWorkerMain.MockWorker worker = MockWorkerMain.start(args);
                fleet.add(worker);
                urls.add(worker.baseUrl());
            }
            router = RouterMain.start("--port", "0", "--worker-urls", String.join(",", urls), "--policy", policy,
                    "--tokenizer-path", tokenizer, "--health-check-interval-secs", "0.5",
                    "--tenants-file", DemoTenants.write(tenants).toString(), "--qos-engine-priority", "true");
            log.println("kvroute demo, phase 1: " + workers + " mock workers (scheduled engine, hrrn; " + (workers - vllm)
                    + " SGLang-style with load reports and KV events over ZeroMQ, " + vllm + " vLLM-style with Prometheus "
                    + "/metrics and LoRA adapter " + DemoWorkload.ADAPTER + "), router " + router.baseUrl() + ", policy "
                    + policy + ", Qwen3 tokenizer (bundled), " + tenants + " tenants from API keys (" + DemoTenants.describe()
                    + ")");
            awaitFreshLoads(router, workers);
            List<DemoWorkload.Item> items = DemoWorkload.generate(requests, tenants, 400, maxTokens, new SplittableRandom(seed), true);
            DemoSummary.Builder summary = new DemoSummary.Builder(policy, workers);
            summary.fleet(fleetFacts(router));
            return measure(client, router, items, summary, log);
        } finally {
            stop(router, fleet);
        }
    }

    private DemoSummary runPd(HttpClient client, String tokenizer, PrintStream log) throws Exception {
        List<MockWorkerMain.MockWorker> fleet = new ArrayList<>();
        RouterMain.RunningRouter router = null;
        try {
            List<String> prefills = new ArrayList<>();
            List<String> decodes = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                MockWorkerMain.MockWorker p = MockWorkerMain.start(workerArgs(tokenizer, "--role", "prefill").toArray(String[]::new));
                fleet.add(p);
                prefills.add(p.baseUrl());
                // decode nodes run out of KV every 16 tokens: longer answers continue in new segments
                MockWorkerMain.MockWorker d = MockWorkerMain.start(workerArgs(tokenizer, "--role", "decode",
                        "--decode-segment-tokens", "16").toArray(String[]::new));
                fleet.add(d);
                decodes.add(d.baseUrl());
            }
            router = RouterMain.start("--port", "0", "--prefill-urls", String.join(",", prefills), "--decode-urls",
                    String.join(",", decodes), "--prefill-policy", policy, "--tokenizer-path", tokenizer,
                    "--health-check-interval-secs", "0.5");
            log.println("kvroute demo, phase 2: prefill/decode disaggregation, 2 prefill + 2 decode workers, router "
                    + router.baseUrl());
            awaitBootstrapPorts(router);
            List<DemoWorkload.Item> items = DemoWorkload.generate(pdRequests, tenants, 400, maxTokens, new SplittableRandom(seed + 1));
            return measure(client, router, items,
                    new DemoSummary.Builder("pd (prefill " + policy + ", decode power_of_two)", 4), log);
        } finally {
            stop(router, fleet);
        }
    }

    private DemoSummary measure(HttpClient client, RouterMain.RunningRouter router, List<DemoWorkload.Item> items,
            DemoSummary.Builder summary, PrintStream log) throws InterruptedException {
        drive(client, router.baseUrl(), items, summary, log);
        summary.routerCounters(RouterCounters.read(router.router().metrics().registry()));
        return summary.build();
    }

    /** Per worker url: the engine type the router learned and where its load comes from. */
    private static java.util.Map<String, String> fleetFacts(RouterMain.RunningRouter router) {
        java.util.Map<String, String> facts = new java.util.TreeMap<>();
        io.kvroute.router.load.EngineLoadSnapshot loads = router.router().loads().snapshot();
        for (io.kvroute.router.worker.Worker w : router.router().workers().fleet().all()) {
            String source = loads.source(w.id()).map(s -> s.name().toLowerCase(java.util.Locale.ROOT)).orElse("none");
            facts.put(w.url(), (w.engine() == null ? "unknown" : w.engine().name().toLowerCase(java.util.Locale.ROOT))
                    + ", load from " + source + (w.kvEvents() != null ? ", KV events" : ""));
        }
        return facts;
    }

    private static void stop(RouterMain.RunningRouter router, List<MockWorkerMain.MockWorker> fleet) {
        if (router != null) {
            router.close();
        }
        for (MockWorkerMain.MockWorker worker : fleet) {
            worker.close();
        }
    }

    /**
     * Waits (at most 10 s) until the router learned every prefill worker's bootstrap port from its
     * /server_info: woken by the registry's change notifications, not by polling.
     */
    private static void awaitBootstrapPorts(RouterMain.RunningRouter router) throws InterruptedException {
        // On timeout the router still routes; the first PD requests then wait for discovery themselves.
        router.router().workers().awaitFleet(fleet -> fleet.all().stream().noneMatch(
                w -> w.role() == io.kvroute.router.worker.WorkerRole.PREFILL && w.bootstrapPort() == null),
                java.time.Duration.ofSeconds(10));
    }

    /**
     * Waits (at most 10 s) until the router has fresh load reports from every worker, so the summary
     * shows engine-reported pressure. The load plane has no change callback; a short poll it is.
     */
    private static void awaitFreshLoads(RouterMain.RunningRouter router, int workers) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            io.kvroute.router.load.EngineLoadSnapshot snapshot = router.router().loads().snapshot();
            if (router.router().workers().fleet().all().stream().filter(w -> snapshot.isFresh(w.id())).count() >= workers) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L);
        }
    }

    private void drive(HttpClient client, String routerUrl, List<DemoWorkload.Item> items, DemoSummary.Builder summary,
            PrintStream log) throws InterruptedException {
        Semaphore slots = new Semaphore(concurrency);
        CountDownLatch done = new CountDownLatch(items.size());
        AtomicInteger completed = new AtomicInteger();
        long runStart = System.nanoTime();
        for (DemoWorkload.Item item : items) {
            slots.acquire();
            long start = System.nanoTime();
            AtomicLong firstByteNanos = new AtomicLong();
            StringBuilder body = new StringBuilder();
            ConcurrentHashMap<String, String> workerSeen = new ConcurrentHashMap<>();
            client.newRequest(routerUrl + "/v1/chat/completions")
                    .method(HttpMethod.POST)
                    .timeout(120, TimeUnit.SECONDS)
                    .body(new StringRequestContent("application/json", item.body()))
                    .headers(h -> DemoTenants.sign(h, item.tenant()))
                    .onResponseHeaders(r -> {
                        String worker = r.getHeaders().get("x-kvroute-worker");
                        if (worker != null) {
                            workerSeen.put("w", worker);
                        }
                    })
                    .onResponseContent((r, buffer) -> {
                        firstByteNanos.compareAndSet(0, System.nanoTime() - start);
                        synchronized (body) {
                            body.append(StandardCharsets.UTF_8.decode(buffer.duplicate()));
                        }
                    })
                    .send(result -> {
                        try {
                            long e2eNanos = System.nanoTime() - start;
                            int status = result.getResponse() == null ? 0 : result.getResponse().getStatus();
                            boolean ok = result.isSucceeded() && status == 200;
                            String text;
                            synchronized (body) {
                                text = body.toString();
                            }
                            JsonNode usage = ok ? usage(text, item.stream()) : null;
                            if (ok && item.stream() && text.contains("\"error\"")) {
                                ok = false;
                            }
                            summary.record(ok, item.stream(), firstByteNanos.get(), e2eNanos,
                                    workerSeen.getOrDefault("w", "?"), usage);
                            summary.recordTenant(DemoTenants.label(item.tenant()), ok, item.stream() ? firstByteNanos.get() : 0);
                            int n = completed.incrementAndGet();
                            if (n % 100 == 0 || n == items.size()) {
                                log.printf("  %d/%d requests done (%.1f s)%n", n, items.size(),
                                        (System.nanoTime() - runStart) / 1e9);
                            }
                        } finally {
                            slots.release();
                            done.countDown();
                        }
                    });
        }
        if (!done.await(10, TimeUnit.MINUTES)) {
            throw new IllegalStateException("demo requests did not finish within 10 minutes");
        }
        summary.wallNanos(System.nanoTime() - runStart);
    }

    /** The usage object of a response: the JSON body, or the SSE usage chunk. */
    static JsonNode usage(String text, boolean stream) {
        try {
            if (!stream) {
                return JSON.readTree(text).get("usage");
            }
            JsonNode usage = null;
            for (String line : text.split("\n")) {
                if (line.startsWith("data: {")) {
                    JsonNode event = JSON.readTree(line.substring(6));
                    if (event.hasNonNull("usage")) {
                        usage = event.get("usage");
                    }
                }
            }
            return usage;
        } catch (java.io.IOException e) {
            return null;
        }
    }
}
