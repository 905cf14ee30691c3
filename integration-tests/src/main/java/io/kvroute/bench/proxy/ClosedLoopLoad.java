package io.kvroute.bench.proxy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Recorder;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A closed-loop HTTP load generator, the stand-in for {@code wrk} when it is not installed: {@code
 * connections} loops each keep one request in flight over keep-alive (the next starts when the previous
 * completes), for a warm-up then a measured period. Requests rotate over {@code urls}, one per
 * request, so a fleet of N loopback addresses is hit evenly when the load targets workers directly.
 *
 * <p>It shares the machine's cores with the router and the upstream, exactly as wrk does in the issue's
 * table; figures are only comparable between targets measured in the same run.
 */
public final class ClosedLoopLoad {

    /**
     * Throughput and latency of the measured period; {@code served} and {@code failed} count the whole run,
     * warm-up included (a failure is never excused by timing).
     */
    public record Result(double requestsPerSec, double p50Micros, double p99Micros, long served, long failed) {}

    private ClosedLoopLoad() {}

    public static Result run(List<String> urls, byte[] body, int connections, long warmupMillis, long measureMillis)
            throws Exception {
        return run(urls, body, null, connections, warmupMillis, measureMillis);
    }

    /** As above, each request carrying the next of {@code keys}' API keys in turn (none when null). */
    static Result run(List<String> urls, byte[] body, ApiKeys keys, int connections, long warmupMillis,
                      long measureMillis) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(Math.max(8, connections + 4), 2);
        threads.setName("load");
        HttpClient client = new HttpClient();
        client.setExecutor(threads);
        client.setMaxConnectionsPerDestination(Math.max(1, connections));
        client.setMaxRequestsQueuedPerDestination(Math.max(1024, connections * 4));
        client.setIdleTimeout(60_000);
        client.start();
        try {
            Recorder recorder = new Recorder(3);
            AtomicLong ok = new AtomicLong();
            AtomicLong served = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            AtomicLong next = new AtomicLong();
            long start = System.nanoTime();
            long measureFrom = start + TimeUnit.MILLISECONDS.toNanos(warmupMillis);
            long end = measureFrom + TimeUnit.MILLISECONDS.toNanos(measureMillis);
            CountDownLatch done = new CountDownLatch(connections);
            for (int c = 0; c < connections; c++) {
                loop(client, urls, body, keys, next, recorder, ok, served, failed, measureFrom, end, done);
            }
            if (!done.await(warmupMillis + measureMillis + 60_000, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("load loops did not finish");
            }
            var histogram = recorder.getIntervalHistogram();
            double seconds = (end - measureFrom) / 1e9;
            return new Result(ok.get() / seconds, histogram.getValueAtPercentile(50),
                    histogram.getValueAtPercentile(99), served.get(), failed.get());
        } finally {
            client.stop();
        }
    }

    private static void loop(HttpClient client, List<String> urls, byte[] body, ApiKeys keys, AtomicLong next, Recorder recorder,
            AtomicLong ok, AtomicLong served, AtomicLong failed, long measureFrom, long end, CountDownLatch done) {
        long sent = System.nanoTime();
        if (sent >= end) {
            done.countDown();
            return;
        }
        long n = next.getAndIncrement();
        String url = urls.get((int) Math.floorMod(n, (long) urls.size()));
        Request request = client.newRequest(url).method(HttpMethod.POST).timeout(30, TimeUnit.SECONDS)
                .body(new BytesRequestContent("application/json", body));
        if (keys != null) {
            request.headers(h -> h.put(HttpHeader.AUTHORIZATION, "Bearer " + keys.key(n)));
        }
        request.send(result -> {
                    long now = System.nanoTime();
                    boolean good = result.isSucceeded() && result.getResponse().getStatus() == 200;
                    (good ? served : failed).incrementAndGet();
                    if (good && sent >= measureFrom && now <= end) {
                        ok.incrementAndGet();
                        recorder.recordValue((now - sent) / 1000);
                    }
                    loop(client, urls, body, keys, next, recorder, ok, served, failed, measureFrom, end, done);
                });
    }

    /** The request body every benchmark sends: a short chat, as a client of the router would. */
    public static byte[] chatBody(String model) {
        return ("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"system\",\"content\":\"You are a helpful assistant.\"},"
                + "{\"role\":\"user\",\"content\":\"What is the capital of France? Answer in one word.\"}],\"max_tokens\":1}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
