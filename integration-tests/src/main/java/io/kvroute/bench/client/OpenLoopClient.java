package io.kvroute.bench.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * An open-loop load generator: every request is sent at its scheduled time whether or not earlier
 * ones have answered, so a slow server shows up as latency, never as a lower offered rate (the
 * "coordinated omission" trap of closed-loop clients).
 *
 * <p>Design: one scheduler thread walks the schedule in send-time order, parks until each request
 * is due and hands it to a small dispatch pool that starts it on Jetty's asynchronous
 * {@link HttpClient} (so one slow send never delays the next); the connection pool is sized so
 * no request waits for a connection. Response events are timed on Jetty's threads by a
 * {@link ResponseParser}. The actual send instant (request committed) is recorded next to the
 * scheduled one, so any lateness is visible in the results rather than silently absorbed.
 *
 * <p>Bounded: each request has a timeout, and the whole run an overall deadline after which
 * outstanding requests are aborted and unsent ones recorded as not sent; {@link #run} always
 * returns one record per scheduled request.
 *
 * <p>Threading: {@link #run} may be called by one thread at a time; {@link #close} stops the client.
 */
public final class OpenLoopClient implements AutoCloseable {

    /**
     * @param requestTimeout per-request total timeout
     * @param overallTimeout the whole run's deadline, measured from its start
     * @param maxConnections bounds concurrent connections to the router (one streaming request each)
     */
    public record Options(Duration requestTimeout, Duration overallTimeout, int maxConnections) {
        public Options {
            Objects.requireNonNull(requestTimeout, "requestTimeout");
            Objects.requireNonNull(overallTimeout, "overallTimeout");
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnections must be >= 1: " + maxConnections);
            }
        }

        public static Options defaults() {
            return new Options(Duration.ofSeconds(120), Duration.ofSeconds(300), 4096);
        }
    }

    /** Told about each finished request, from Jetty or the caller's thread. Must not block. */
    @FunctionalInterface
    public interface CompletionListener {
        void completed(RequestRecord record);
    }

    /**
     * Threads that hand due requests to Jetty. Sending a large body costs the calling thread real
     * time; measured with harness-selftest (48 x 64 KB bodies 1 ms apart, loaded 2-core box), a
     * lone scheduler thread doing it fell up to 1.9 s behind; the scheduler now only waits and
     * enqueues.
     */
    private static final int DISPATCH_THREADS = 8;

    /** Bounds the connections opened ahead of a run (one per request up to this). */
    private static final int MAX_PRECREATED_CONNECTIONS = 512;

    private static final long PRECREATE_TIMEOUT_SECONDS = 10;

    /** How long to wait for aborted requests to report after the overall deadline. */
    private static final long ABORT_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final Options options;
    private final HttpClient httpClient;
    private final ObjectMapper json = new ObjectMapper();
    private final LongSupplier nanoTicker = System::nanoTime;
    private final ExecutorService dispatchPool;

    public OpenLoopClient(Options options) throws Exception {
        this.options = Objects.requireNonNull(options, "options");
        QueuedThreadPool pool = new QueuedThreadPool(64, 4);
        pool.setName("open-loop-client");
        pool.setDaemon(true);
        httpClient = new HttpClient();
        httpClient.setExecutor(pool);
        httpClient.setMaxConnectionsPerDestination(options.maxConnections());
        httpClient.setMaxRequestsQueuedPerDestination(Math.max(1024, options.maxConnections() * 4));
        httpClient.setIdleTimeout(options.requestTimeout().toMillis());
        httpClient.setConnectTimeout(5_000);
        httpClient.start();
        AtomicInteger threadNumber = new AtomicInteger();
        dispatchPool = Executors.newFixedThreadPool(DISPATCH_THREADS, r -> {
            Thread t = new Thread(r, "open-loop-dispatch-" + threadNumber.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Sends {@code requests} to {@code baseUrl} (e.g. {@code http://127.0.0.1:8080}) on schedule and
     * returns one record per request, in the input order.
     */
    public List<RequestRecord> run(String baseUrl, List<ScheduledRequest> requests, CompletionListener listener)
            throws InterruptedException {
        Objects.requireNonNull(baseUrl, "baseUrl");
        Objects.requireNonNull(listener, "listener");
        String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        int n = requests.size();
        Exchange[] exchanges = new Exchange[n];
        for (int i = 0; i < n; i++) {
            exchanges[i] = new Exchange(i, requests.get(i));
        }
        List<Exchange> bySendTime = new ArrayList<>(List.of(exchanges));
        bySendTime.sort(Comparator.comparingLong(e -> e.scheduled.sendAtNanosFromStart()));

        preCreateConnections(base, Math.min(n, Math.min(options.maxConnections(), MAX_PRECREATED_CONNECTIONS)));
        CountDownLatch finished = new CountDownLatch(n);
        AtomicBoolean stopped = new AtomicBoolean();
        long startNanos = nanoTicker.getAsLong();
        long deadlineNanos = startNanos + options.overallTimeout().toNanos();

        Thread scheduler = new Thread(() -> {
            for (Exchange exchange : bySendTime) {
                long dueNanos = startNanos + exchange.scheduled.sendAtNanosFromStart();
                if (dueNanos >= deadlineNanos || Thread.currentThread().isInterrupted()) {
                    exchange.finishUnsent("not sent: overall timeout before its send time", listener, finished);
                    continue;
                }
                for (long wait = dueNanos - nanoTicker.getAsLong(); wait > 0; wait = dueNanos - nanoTicker.getAsLong()) {
                    LockSupport.parkNanos(wait);
                    if (Thread.currentThread().isInterrupted()) {
                        break;
                    }
                }
                if (Thread.currentThread().isInterrupted()) {
                    exchange.finishUnsent("not sent: overall timeout before its send time", listener, finished);
                    continue;
                }
                try {
                    dispatchPool.execute(() -> send(base, exchange, startNanos, listener, finished, stopped));
                } catch (RejectedExecutionException e) {
                    exchange.finishUnsent("not sent: client closed", listener, finished);
                }
            }
        }, "open-loop-scheduler");
        scheduler.setDaemon(true);
        scheduler.start();

        long remaining = deadlineNanos - nanoTicker.getAsLong();
        boolean allDone = remaining > 0 && finished.await(remaining, TimeUnit.NANOSECONDS);
        if (!allDone) {
            stopped.set(true);
            scheduler.interrupt();
            scheduler.join(TimeUnit.NANOSECONDS.toMillis(ABORT_GRACE_NANOS));
            TimeoutException timeout = new TimeoutException("overall timeout " + options.overallTimeout());
            for (Exchange exchange : exchanges) {
                Request request = exchange.request;
                if (request != null) {
                    request.abort(timeout);
                }
            }
            finished.await(ABORT_GRACE_NANOS, TimeUnit.NANOSECONDS);
        }
        List<RequestRecord> records = new ArrayList<>(n);
        for (Exchange exchange : exchanges) {
            records.add(exchange.recordOrTimeout(startNanos));
        }
        return records;
    }

    /**
     * Opens connections before the clock starts so that sends reuse idle connections instead of
     * paying a TCP connect each (measured with harness-selftest; see {@link #DISPATCH_THREADS}).
     * Best effort: a failure only costs the optimization.
     */
    private void preCreateConnections(String base, int count) {
        if (count < 1) {
            return;
        }
        try {
            Destination destination = httpClient.resolveDestination(httpClient.newRequest(base + "/"));
            destination.getConnectionPool().preCreateConnections(count).get(PRECREATE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            System.err.println("warning: could not pre-open " + count + " connections to " + base + ": " + e);
        }
    }

    private void send(String base, Exchange exchange, long startNanos, CompletionListener listener, CountDownLatch finished,
            AtomicBoolean stopped) {
        if (stopped.get()) {
            exchange.finishUnsent("not sent: overall timeout while queued for dispatch", listener, finished);
            return;
        }
        ScheduledRequest scheduled = exchange.scheduled;
        exchange.dispatchedNanos = nanoTicker.getAsLong() - startNanos;
        try {
            Request request = httpClient.newRequest(base + scheduled.path())
                    .method(HttpMethod.POST)
                    .headers(h -> {
                        h.put(HttpHeader.ACCEPT, "text/event-stream, application/json");
                        scheduled.headers().forEach(h::put);
                    })
                    .body(new BytesRequestContent("application/json", scheduled.jsonBody()))
                    .timeout(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS)
                    .onRequestCommit(r -> exchange.sentNanos = nanoTicker.getAsLong() - startNanos);
            exchange.request = request;
            request.send(new Response.Listener() {
                @Override
                public void onHeaders(Response response) {
                    String type = response.getHeaders().get(HttpHeader.CONTENT_TYPE);
                    boolean streaming = type != null && type.toLowerCase().contains("text/event-stream");
                    exchange.parser = new ResponseParser(json, streaming);
                }

                @Override
                public void onContent(Response response, ByteBuffer content) {
                    ResponseParser parser = exchange.parser;
                    if (parser != null) {
                        parser.onContent(content, nanoTicker.getAsLong() - startNanos);
                    }
                }

                @Override
                public void onComplete(Result result) {
                    exchange.complete(result, nanoTicker.getAsLong() - startNanos, listener, finished);
                }
            });
        } catch (RuntimeException e) {
            exchange.finishUnsent("send failed: " + e, listener, finished);
        }
    }

    @Override
    public void close() throws Exception {
        dispatchPool.shutdownNow();
        httpClient.stop();
    }

    /** Per-request mutable state; written by the scheduler and then Jetty's serialized callbacks. */
    private static final class Exchange {
        final int index;
        final ScheduledRequest scheduled;
        volatile Request request;
        volatile ResponseParser parser;
        volatile long dispatchedNanos = -1;
        volatile long sentNanos = -1;
        volatile RequestRecord record;

        Exchange(int index, ScheduledRequest scheduled) {
            this.index = index;
            this.scheduled = scheduled;
        }

        void complete(Result result, long endNanos, CompletionListener listener, CountDownLatch finished) {
            ResponseParser p = parser;
            int status = result.getResponse() == null ? 0 : result.getResponse().getStatus();
            String error = null;
            if (p != null) {
                p.onEnd(endNanos);
            }
            if (result.isFailed()) {
                Throwable failure = result.getFailure();
                error = "failed: " + failure.getClass().getSimpleName() + ": " + failure.getMessage();
            } else if (status != 200) {
                error = "HTTP " + status;
            } else if (p != null && p.error() != null) {
                error = p.error();
            }
            finish(new RequestRecord(index, scheduled.requestClass(), scheduled.tag(),
                    scheduled.sendAtNanosFromStart(), dispatchedNanos, sentNanos,
                    p == null ? -1 : p.firstTokenNanos(), p == null ? -1 : p.lastTokenNanos(), endNanos,
                    status, error,
                    p == null ? 0 : p.outputTokens(), p == null ? 0 : p.promptTokens(), p == null ? 0 : p.cachedTokens()),
                    listener, finished);
        }

        void finishUnsent(String error, CompletionListener listener, CountDownLatch finished) {
            finish(new RequestRecord(index, scheduled.requestClass(), scheduled.tag(),
                    scheduled.sendAtNanosFromStart(), dispatchedNanos, -1, -1, -1, -1, 0, error, 0, 0, 0),
                    listener, finished);
        }

        /**
         * First call wins (a completion may race an abort); the listener runs outside the lock and before the
         * latch counts down, so every listener call has happened by the time {@link #run} returns.
         */
        private void finish(RequestRecord finalRecord, CompletionListener listener, CountDownLatch finished) {
            synchronized (this) {
                if (record != null) {
                    return;
                }
                record = finalRecord;
            }
            try {
                listener.completed(finalRecord);
            } finally {
                finished.countDown();
            }
        }

        RequestRecord recordOrTimeout(long startNanos) {
            RequestRecord r = record;
            if (r != null) {
                return r;
            }
            return new RequestRecord(index, scheduled.requestClass(), scheduled.tag(),
                    scheduled.sendAtNanosFromStart(), dispatchedNanos, sentNanos, -1, -1, -1, 0,
                    "overall timeout: no completion", 0, 0, 0);
        }
    }
}
