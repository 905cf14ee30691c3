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

    DemoRun(int workers, int requests, int concurrency, int tenants, String policy, int maxTokens, long seed) {
        this.workers = workers;
        this.requests = requests;
        this.concurrency = concurrency;
        this.tenants = tenants;
        this.policy = policy;
        this.maxTokens = maxTokens;
        this.seed = seed;
    }

    DemoSummary execute(PrintStream log) throws Exception {
        List<MockWorkerMain.MockWorker> fleet = new ArrayList<>();
        RouterMain.RunningRouter router = null;
        HttpClient client = new HttpClient();
        client.setMaxConnectionsPerDestination(concurrency * 2);
        try {
            List<String> urls = new ArrayList<>();
            String tokenizer = BundledTokenizer.qwen3().toString();
            for (int i = 0; i < workers; i++) {
                MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0",
                        "--prefill-ms-per-1k", "20", "--decode-ms-per-step", "4", "--tokenizer-path", tokenizer);
                fleet.add(worker);
                urls.add(worker.baseUrl());
            }
            router = RouterMain.start("--port", "0", "--worker-urls", String.join(",", urls), "--policy", policy,
                    "--tokenizer-path", tokenizer);
            log.println("kvroute demo: " + workers + " mock workers " + urls + ", router " + router.baseUrl()
                    + ", policy " + policy + ", tokenizer Qwen3 (bundled)");
            client.start();
            List<DemoWorkload.Item> items = DemoWorkload.generate(requests, tenants, 400, maxTokens, new SplittableRandom(seed));
            DemoSummary.Builder summary = new DemoSummary.Builder(policy, workers);
            drive(client, router.baseUrl(), items, summary, log);
            summary.routerCounters(RouterCounters.read(router.router().metrics().registry()));
            return summary.build();
        } finally {
            client.stop();
            if (router != null) {
                router.close();
            }
            for (MockWorkerMain.MockWorker worker : fleet) {
                worker.close();
            }
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
