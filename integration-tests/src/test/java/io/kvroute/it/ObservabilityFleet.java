package io.kvroute.it;

import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One router over every path an operator watches: two regular mock workers ({@value #MODEL}), a PD
 * pair ({@value #PD_MODEL}) whose decode worker ends each segment after a few tokens (so requests
 * continue), and a {@link FailingWorker} ({@value #BROKEN_MODEL}) that answers every request 503.
 * All real servers on loopback ephemeral ports, with the bundled Qwen3 tokenizer.
 */
final class ObservabilityFleet implements AutoCloseable {

    static final String MODEL = "mock-model";
    static final String PD_MODEL = "pd-model";
    static final String BROKEN_MODEL = "broken-model";

    final List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
    MockWorkerMain.MockWorker prefill;
    MockWorkerMain.MockWorker decode;
    FailingWorker failing;
    RouterMain.RunningRouter router;

    static ObservabilityFleet start(List<String> routerArgs) throws Exception {
        return start(routerArgs, RequestTracer.off(), RequestTracer::off);
    }

    /** A fleet whose router traces through {@code routerTracer} and each mock worker through a tracer from {@code workerTracers}. */
    static ObservabilityFleet start(List<String> routerArgs, RequestTracer routerTracer,
            java.util.function.Supplier<RequestTracer> workerTracers) throws Exception {
        ObservabilityFleet fleet = new ObservabilityFleet();
        try {
            String tokenizer = BundledTokenizer.qwen3().toString();
            List<String> fast = List.of("--tokenizer-path", tokenizer, "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "2");
            List<String> urls = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                MockWorkerMain.MockWorker w = MockWorkerMain.start(args(fast, "--model-id", MODEL));
                fleet.workers.add(w);
                urls.add(w.baseUrl());
            }
            fleet.failing = new FailingWorker(BROKEN_MODEL);
            urls.add(fleet.failing.baseUrl());
            fleet.prefill = MockWorkerMain.start(args(fast, "--model-id", PD_MODEL, "--role", "prefill"));
            fleet.decode = MockWorkerMain.start(args(fast, "--model-id", PD_MODEL, "--role", "decode",
                    "--decode-segment-tokens", "5"));
            List<String> args = new ArrayList<>(List.of("--port", "0", "--worker-urls", String.join(",", urls),
                    "--prefill-urls", fleet.prefill.baseUrl(), "--decode-urls", fleet.decode.baseUrl(),
                    "--policy", "cache_aware", "--tokenizer-path", tokenizer, "--health-check-interval-secs", "0.2",
                    "--retry-initial-backoff-ms", "1", "--retry-max-backoff-ms", "5", "--cb-failure-threshold", "4"));
            args.addAll(routerArgs);
            for (MockWorkerMain.MockWorker w : fleet.mockWorkers()) {
                w.handler().useTracer(workerTracers.get());
            }
            fleet.router = RouterMain.start(routerTracer, args.toArray(String[]::new));
            await().atMost(Duration.ofSeconds(15)).until(() -> {
                List<Worker> all = fleet.router.router().workers().fleet().all();
                var loads = fleet.router.router().loads().snapshot();
                return all.stream().allMatch(w -> w.modelId() != null)
                        && all.stream().filter(w -> w.role() == WorkerRole.PREFILL).allMatch(w -> w.bootstrapPort() != null)
                        && fleet.workers.stream().allMatch(w -> loads.isFresh(Worker.idFor(w.baseUrl())));
            });
            return fleet;
        } catch (Exception e) {
            fleet.close();
            throw e;
        }
    }

    private static String[] args(List<String> base, String... more) {
        List<String> out = new ArrayList<>(List.of("--port", "0"));
        out.addAll(base);
        out.addAll(List.of(more));
        return out.toArray(String[]::new);
    }

    List<MockWorkerMain.MockWorker> mockWorkers() {
        List<MockWorkerMain.MockWorker> all = new ArrayList<>(workers);
        all.add(prefill);
        all.add(decode);
        return all;
    }

    String url(String path) {
        return router.baseUrl() + path;
    }

    static String chat(String model, String text, int maxTokens, boolean stream) {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"max_tokens\":" + maxTokens
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}]}";
    }

    static String completion(String model, String prompt, int maxTokens) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":" + maxTokens + ",\"prompt\":\"" + prompt + "\"}";
    }

    @Override
    public void close() {
        if (router != null) {
            router.close();
        }
        for (AutoCloseable c : new AutoCloseable[] {prefill, decode, failing}) {
            quietly(c);
        }
        for (MockWorkerMain.MockWorker w : workers) {
            quietly(w);
        }
    }

    private static void quietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // already stopped by the test
        }
    }
}
