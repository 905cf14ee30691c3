package io.kvroute.bench.load;

import io.kvroute.router.load.EngineMetricNames;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.load.LoadPlaneConfig;
import io.kvroute.router.load.MetricsScraper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The router's cost of scraping {@code /metrics} of many vLLM workers: {@code workers} registrations
 * of one {@link MetricsScraper} against one Jetty server serving a vLLM exposition on a path per worker
 * ({@code /w<i>/metrics}), each worker at its own loopback address (its own HTTP destination with one
 * connection, as the router's scrape client has per worker), at the scrape interval. The router side is every thread but the
 * server's pool (named {@code probe-server}); its CPU time and allocated bytes are read per thread
 * ({@code com.sun.management.ThreadMXBean}) over the measured window and reported per second of wall
 * time, with scrapes per second. Two bodies: the four gauges kvroute reads (what the mock serves) and a
 * full-size vLLM exposition (the same gauges plus histogram families, about {@code paddingKib} KiB).
 *
 * <p>Run: {@code java -cp integration-tests/target/kvroute-bench.jar io.kvroute.bench.load.ScrapeCostProbe
 * [workers=1000] [intervalMs=200] [seconds=20] [paddingKib=60] [warmupSeconds=40]}: each body runs in a fresh
 * scraper and server after its own warm-up.
 */
public final class ScrapeCostProbe {

    private ScrapeCostProbe() {}

    public static void main(String[] args) throws Exception {
        int workers = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        long intervalMs = args.length > 1 ? Long.parseLong(args[1]) : 200;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int paddingKib = args.length > 3 ? Integer.parseInt(args[3]) : 60;
        int warmupSeconds = args.length > 4 ? Integer.parseInt(args[4]) : 40;
        System.out.println("body_bytes workers interval_ms scrapes_per_s router_cpu_core_pct router_alloc_mb_per_s");
        for (String body : new String[] {exposition(0), exposition(paddingKib)}) {
            run(body, workers, intervalMs, seconds, warmupSeconds);
        }
    }

    private static void run(String body, int workers, long intervalMs, int seconds, int warmupSeconds) throws Exception {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        QueuedThreadPool pool = new QueuedThreadPool(64, 8);
        pool.setName("probe-server");
        Server server = new Server(pool);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("0.0.0.0"); // every loopback address: one per worker below
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
                response.write(true, ByteBuffer.wrap(bytes), callback);
                return true;
            }
        });
        server.start();
        HttpClient client = MetricsScraper.newHttpClient(500); // the router's scrape client
        client.start();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LoadPlane plane = new LoadPlane(LoadPlaneConfig.defaults(), System::nanoTime, registry);
        MetricsScraper scraper = new MetricsScraper(plane, client, intervalMs, 500, 5000, System::nanoTime, registry);
        for (int i = 0; i < workers; i++) {
            scraper.addWorker("w" + i, workerBase(i, connector.getLocalPort()) + "/w" + i, EngineMetricNames.VLLM);
        }
        scraper.start();
        Thread.sleep(warmupSeconds * 1000L); // warm-up: connections, JIT (about 40 s of load to steady state here)
        double okBefore = registry.get("kvroute.load.scrapes").tag("outcome", "ok").counter().count();
        Map<Long, long[]> before = routerThreads();
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long wallNanos = System.nanoTime() - t0;
        Map<Long, long[]> after = routerThreads();
        double ok = registry.get("kvroute.load.scrapes").tag("outcome", "ok").counter().count() - okBefore;
        long cpu = 0;
        long alloc = 0;
        for (Map.Entry<Long, long[]> e : after.entrySet()) {
            long[] b = before.getOrDefault(e.getKey(), new long[2]);
            cpu += e.getValue()[0] - b[0];
            alloc += e.getValue()[1] - b[1];
        }
        double wallSeconds = wallNanos / 1e9;
        System.out.printf("%d %d %d %.0f %.2f %.1f%n", bytes.length, workers, intervalMs, ok / wallSeconds,
                100.0 * cpu / wallNanos, alloc / wallSeconds / 1e6);
        scraper.close();
        plane.close();
        client.stop();
        server.stop();
    }

    /**
     * Worker {@code i}'s address: its own loopback address in 127.0.0.0/8, so that every worker is its own
     * HTTP destination with one connection, as in a fleet (one destination holding 1,000 connections
     * would make the client search its connection pool on every scrape).
     */
    static String workerBase(int i, int port) {
        return "http://127." + (i / 62_500) + "." + (i / 250 % 250) + "." + (1 + i % 250) + ":" + port;
    }

    /** Per live non-server thread: {cpu nanos, allocated bytes}. */
    private static Map<Long, long[]> routerThreads() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Map<Long, long[]> out = new HashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("probe-server")) {
                continue;
            }
            long cpu = mx.getThreadCpuTime(t.getId());
            long alloc = mx.getThreadAllocatedBytes(t.getId());
            if (cpu >= 0 && alloc >= 0) {
                out.put(t.getId(), new long[] {cpu, alloc});
            }
        }
        return out;
    }

    /** A vLLM exposition of one engine; {@code paddingKib} > 0 adds histogram families up to about that size. */
    static String exposition(int paddingKib) {
        String labels = "{engine=\"0\",model_name=\"qwen3\"}";
        StringBuilder out = new StringBuilder();
        out.append("# HELP vllm:num_requests_running Number of requests in model execution batches.\n")
                .append("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running").append(labels).append(" 3.0\n")
                .append("# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n")
                .append("# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting").append(labels).append(" 1.0\n")
                .append("# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n")
                .append("# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc").append(labels).append(" 0.25\n")
                .append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n")
                .append("# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size=\"16\",engine=\"0\","
                        + "num_gpu_blocks=\"8192\"} 1.0\n");
        for (int family = 0; out.length() < paddingKib * 1024; family++) {
            String name = "vllm:request_latency_family_" + family + "_seconds";
            out.append("# HELP ").append(name).append(" Histogram of a request latency.\n");
            out.append("# TYPE ").append(name).append(" histogram\n");
            for (double le : new double[] {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80}) {
                out.append(name).append("_bucket{engine=\"0\",le=\"").append(le).append("\",model_name=\"qwen3\"} 17.0\n");
            }
            out.append(name).append("_bucket{engine=\"0\",le=\"+Inf\",model_name=\"qwen3\"} 17.0\n");
            out.append(name).append("_count").append(labels).append(" 17.0\n");
            out.append(name).append("_sum").append(labels).append(" 3.5\n");
        }
        return out.toString();
    }
}
