package io.kvroute.router.load;

import io.kvroute.protocol.LoadStat;
import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.component.LifeCycle;
import org.eclipse.jetty.util.thread.Invocable;

/**
 * The {@code /metrics} load source: scrapes each registered worker's Prometheus endpoint and hands the
 * mapped per-rank reading to the {@link LoadPlane} ({@link LoadPlane#applyScrape}). An adapter only:
 * parsing is {@link PrometheusTextParser}, mapping {@link MetricsLoadMapper}, timing {@link ScrapeSchedule}.
 *
 * <p><b>Threading.</b> One scheduler thread ticks every quarter interval: it starts the scrapes that are
 * due and aborts those past their deadline; responses are parsed and mapped on the HTTP client's threads. Each worker's schedule is guarded
 * by its own monitor, held only to read or update the schedule (never across I/O). The HTTP client
 * should allow one connection per destination; with at most one scrape in flight per worker that
 * gives one connection per worker.
 *
 * <p><b>Registration.</b> A worker joins the load plane as a scraped worker on its FIRST good scrape,
 * not when it is added: an engine that serves no usable {@code /metrics} (an SGLang started without
 * {@code --enable-metrics}) then stays unknown to the plane (fail open, as before) instead of counting
 * as stale and saturated forever. After that, a failing scrape leaves the last reading to age past
 * the staleness bound, and the worker counts as saturated (stale = saturated, llm-d's rule).
 *
 * <p><b>Timeouts.</b> The tick enforces the per-request timeout itself: a scrape still running at its
 * deadline is aborted with a {@link TimeoutException} (outcome {@code timeout}) on the first tick at or
 * after it, so at most a quarter interval late. The request carries no Jetty timeout, whose bookkeeping
 * (Jetty 12.1 {@code HttpConnection.RequestTimeouts} and {@code HttpDestination.RequestTimeouts},
 * {@code CyclicTimeouts} rescheduling a task on the client's scheduler) ran on every scrape; the tick
 * already visits every worker (49 → 43 µs of CPU per small scrape, ScrapeCostProbe on a loaded box,
 * 2026-12-06, docs/benchmarks-load.md). Removing a worker aborts its scrape in flight, which the tick no longer
 * visits.
 *
 * <p>Outcomes are counted as {@code kvroute_load_scrapes_total{outcome}}: {@code ok}, {@code timeout},
 * {@code connect}, {@code http_status}, {@code too_large}, {@code malformed}, {@code missing_metric},
 * {@code bad_value}, {@code too_many_ranks}; a stale worker's last failure is its reason in
 * {@code kvroute_load_workers_stale_saturated_by_reason{reason}} ({@link StaleScrapeReasons}).
 */
public final class MetricsScraper implements AutoCloseable {
    /** Largest exposition read from one worker; a vLLM scrape with every histogram is ~100 KiB. */
    static final int MAX_BODY_BYTES = 8 << 20;
    private static final HttpField ACCEPT = new HttpField(HttpHeader.ACCEPT, "text/plain; version=0.0.4");
    static final String[] OUTCOMES = {"ok", "timeout", "connect", "http_status", "too_large", "malformed",
            "missing_metric", "bad_value", "too_many_ranks"};

    private static final class Target {
        final String workerId;
        final String metricsUrl;
        final URI metricsUri; // parsed once: a URL string is parsed on every newRequest
        /** Accept, and Host given up front: without it Jetty builds the request's URI twice to derive it. */
        final Consumer<HttpFields.Mutable> headers;
        final EngineMetricNames names;
        final PrometheusTextParser.Wanted wanted;
        final ScrapeSchedule schedule; // guarded by this
        boolean registered; // guarded by this
        long seq; // guarded by this
        int blockSize; // guarded by this: the last block size the engine reported, 0 before any
        Request inFlight; // guarded by this: the running scrape until it completes or the tick aborts it
        long deadlineNanos; // guarded by this: when the tick aborts inFlight

        Target(String workerId, String metricsUrl, EngineMetricNames names, ScrapeSchedule schedule) {
            this.workerId = workerId;
            this.metricsUrl = metricsUrl;
            this.metricsUri = URI.create(metricsUrl);
            HttpField host = new HttpField(HttpHeader.HOST, metricsUri.getRawAuthority());
            this.headers = h -> h.put(ACCEPT).put(host);
            this.names = names;
            java.util.Set<String> all = new java.util.HashSet<>(names.wanted());
            all.addAll(LoraReading.FAMILIES); // adapters come with the load, in the same scrape
            this.wanted = new PrometheusTextParser.Wanted(all);
            this.schedule = schedule;
        }
    }

    /** Response buffer: a real-sized vLLM exposition (~62 KB) in one or two reads instead of four at Jetty's 16 KiB. */
    static final int RESPONSE_BUFFER_BYTES = 64 << 10;

    private final LoadPlane plane;
    private final HttpClient client;
    private final long intervalNanos;
    private final long timeoutMillis;
    private final long timeoutNanos;
    private final long maxBackoffNanos;
    private final LongSupplier nanoClock;
    private final Map<String, Target> targets = new ConcurrentHashMap<>();
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final StaleScrapeReasons staleReasons;
    private volatile java.util.function.ObjIntConsumer<String> blockSizeListener = (id, size) -> { };
    /** Where each good scrape's LoRA families go (worker id, reading or null when it has none); set once at startup. */
    private volatile BiConsumer<String, LoraReading> loraListener = (id, reading) -> { };
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kvroute-metrics-scrape");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param intervalMillis time between two scrapes of one worker
     * @param timeoutMillis per-request timeout
     * @param maxBackoffMillis longest wait between scrapes of a failing worker
     */
    public MetricsScraper(LoadPlane plane, HttpClient client, long intervalMillis, long timeoutMillis,
            long maxBackoffMillis, LongSupplier nanoClock, MeterRegistry registry) {
        this.plane = requireNonNull(plane, "plane");
        this.client = requireNonNull(client, "client");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
        if (intervalMillis < 10 || timeoutMillis < 1 || maxBackoffMillis < intervalMillis) {
            throw new IllegalArgumentException("scrape interval " + intervalMillis + " ms (at least 10), timeout "
                    + timeoutMillis + " ms, max backoff " + maxBackoffMillis + " ms (at least the interval)");
        }
        this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMillis);
        this.timeoutMillis = timeoutMillis;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        this.maxBackoffNanos = TimeUnit.MILLISECONDS.toNanos(maxBackoffMillis);
        for (String o : OUTCOMES) {
            outcomes.put(o, Counter.builder("kvroute.load.scrapes").tag("outcome", o)
                    .description("/metrics scrapes of engines that push no load report, by outcome")
                    .register(registry));
        }
        this.staleReasons = new StaleScrapeReasons(plane::snapshot, registry);
    }

    /**
     * The HTTP client a scraper should use (the router's, and the bench's): one connection per worker,
     * no redirects, cookies, {@code User-Agent} or {@code Accept-Encoding} (the engines' prometheus_client
     * then answers plain text, and the 8 MiB bound counts wire bytes), a 64 KiB response buffer, and
     * listeners run on the selector thread ({@code InvocationType.NON_BLOCKING}: the body is parsed as it
     * is read, and the completion only queues the reading for the load plane), which saves a hand-off to
     * the client's pool per read. The caller starts and stops it. With the per-worker URI and Host header
     * (see Target) this took a scrape from 43 to 30 µs of CPU (715 B body) and 118 to 87 µs (62 KB), medians,
     * ScrapeCostProbe on a loaded box, 2026-12-06 (docs/benchmarks-load.md).
     */
    public static HttpClient newHttpClient(long connectTimeoutMillis) {
        HttpClientTransportOverHTTP transport = new HttpClientTransportOverHTTP();
        transport.setInvocationType(Invocable.InvocationType.NON_BLOCKING);
        HttpClient client = new HttpClient(transport);
        client.setMaxConnectionsPerDestination(1);
        client.setConnectTimeout(connectTimeoutMillis);
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setUserAgentField(null);
        // HttpClient.doStart installs every decoder it finds (gzip...) when there is none: clear them once started
        client.addEventListener(new LifeCycle.Listener() {
            @Override
            public void lifeCycleStarted(LifeCycle event) {
                client.getContentDecoderFactories().clear();
            }
        });
        client.setResponseBufferSize(RESPONSE_BUFFER_BYTES);
        return client;
    }

    /**
     * Calls {@code listener} with a worker's KV block size whenever a scrape reports one that differs from
     * the last ({@code vllm:cache_config_info{block_size}}), on an HTTP client thread; it must not block.
     */
    public void onBlockSize(java.util.function.ObjIntConsumer<String> listener) {
        blockSizeListener = requireNonNull(listener, "listener");
    }

    /**
     * Receives every good scrape's {@link LoraReading} (null when the exposition has no LoRA family) on an
     * HTTP client thread; it must not block.
     */
    public void onLoraReading(BiConsumer<String, LoraReading> listener) {
        this.loraListener = requireNonNull(listener, "listener");
    }

    public void start() {
        long tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(5), intervalNanos / 4);
        scheduler.scheduleWithFixedDelay(this::tick, 0, tickNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Scrapes {@code baseUrl + "/metrics"} for {@code workerId} with the given names; replaces an earlier
     * registration of the same worker when the URL or names differ.
     */
    public void addWorker(String workerId, String baseUrl, EngineMetricNames names) {
        requireNonNull(workerId, "workerId");
        requireNonNull(names, "names");
        String url = requireNonNull(baseUrl, "baseUrl") + "/metrics";
        Target old = targets.get(workerId);
        if (old != null && old.metricsUrl.equals(url) && old.names.equals(names)) {
            return;
        }
        targets.put(workerId, new Target(workerId, url, names,
                new ScrapeSchedule(intervalNanos, maxBackoffNanos, nanoClock.getAsLong())));
    }

    /** Stops scraping the worker; the caller removes it from the load plane (or re-adds it there as LoadStat). */
    public void removeWorker(String workerId) {
        Target t = targets.remove(workerId);
        staleReasons.forget(workerId);
        if (t != null) {
            Request inFlight;
            synchronized (t) {
                inFlight = t.inFlight;
                t.inFlight = null;
            }
            if (inFlight != null) {
                // the tick no longer visits it: end it now rather than at the connection's idle timeout
                inFlight.abort(new java.util.concurrent.CancellationException("worker " + workerId + " removed"));
            }
        }
    }

    public boolean isScraping(String workerId) {
        return targets.containsKey(workerId);
    }

    /**
     * Aborts every scrape past its deadline and starts every due one (the scheduler thread; tests and the
     * bench may call it directly).
     */
    void tick() {
        long now = nanoClock.getAsLong();
        for (Target t : targets.values()) {
            boolean start;
            Request overdue = null;
            synchronized (t) {
                if (t.inFlight != null && now - t.deadlineNanos >= 0) {
                    overdue = t.inFlight;
                    t.inFlight = null;
                }
                start = t.schedule.tryStart(now);
            }
            if (overdue != null) {
                overdue.abort(new TimeoutException("/metrics scrape over its " + timeoutMillis + " ms timeout"));
            }
            if (start) {
                scrape(t, now);
            }
        }
    }

    private void scrape(Target t, long startedAtNanos) {
        Exchange exchange = new Exchange(t.wanted);
        Request request = client.newRequest(t.metricsUri).headers(t.headers).onResponseContent(exchange);
        synchronized (t) {
            t.inFlight = request;
            t.deadlineNanos = startedAtNanos + timeoutNanos;
        }
        request.send(result -> {
            String outcome = handle(t, result, exchange);
            boolean ok = outcome.equals("ok");
            synchronized (t) {
                if (t.inFlight == request) {
                    t.inFlight = null;
                }
                t.schedule.finish(startedAtNanos, ok);
            }
            if (targets.get(t.workerId) == t) {
                outcomes.get(outcome).increment();
                staleReasons.record(t.workerId, outcome);
            } else if (!result.isFailed()) {
                outcomes.get(outcome).increment(); // a scrape that ended as its worker left; an aborted one counts nothing
            }
        });
    }

    /**
     * One scrape's body, parsed chunk by chunk as the client delivers it (serially, on its threads), so
     * no scrape buffers its exposition: at 1,000 workers every 200 ms, buffering a 60 KiB vLLM body
     * allocated ~520 MB/s and cost about a third of the scraping CPU (ScrapeCostProbe, 2026-12-05).
     */
    private static final class Exchange implements Response.ContentListener {
        final PrometheusTextParser.Stream parser;
        long bodyBytes;
        boolean tooLarge;
        PrometheusTextParser.Malformed malformed;

        Exchange(PrometheusTextParser.Wanted wanted) {
            this.parser = new PrometheusTextParser.Stream(wanted);
        }

        @Override
        public void onContent(Response response, ByteBuffer content) {
            if (response.getStatus() != 200 || malformed != null || tooLarge) {
                return;
            }
            bodyBytes += content.remaining();
            if (bodyBytes > MAX_BODY_BYTES) {
                tooLarge = true;
                response.abort(new IllegalStateException("/metrics body over " + MAX_BODY_BYTES + " bytes"));
                return;
            }
            try {
                parser.feed(content);
            } catch (PrometheusTextParser.Malformed e) {
                malformed = e;
            }
        }
    }

    private String handle(Target t, Result result, Exchange exchange) {
        if (exchange.tooLarge) {
            return "too_large";
        }
        if (result.isFailed()) {
            return result.getFailure() instanceof TimeoutException ? "timeout" : "connect";
        }
        if (result.getResponse().getStatus() != 200) {
            return "http_status";
        }
        if (targets.get(t.workerId) != t) {
            return "ok"; // removed or replaced while in flight: drop the reading
        }
        MetricsLoadMapper.Reading reading;
        LoraReading lora;
        long seq;
        synchronized (t) {
            seq = ++t.seq;
        }
        try {
            if (exchange.malformed != null) {
                throw exchange.malformed;
            }
            Map<String, java.util.List<PrometheusTextParser.Sample>> samples = exchange.parser.finish();
            reading = MetricsLoadMapper.map(samples, t.names, seq);
            lora = LoraReading.of(samples);
        } catch (PrometheusTextParser.Malformed e) {
            return "malformed";
        } catch (MetricsLoadMapper.Refused e) {
            return e.reason;
        }
        boolean first;
        boolean newBlockSize;
        synchronized (t) {
            first = !t.registered;
            t.registered = true;
            newBlockSize = reading.blockSize() > 0 && reading.blockSize() != t.blockSize;
            if (newBlockSize) {
                t.blockSize = reading.blockSize();
            }
        }
        if (first) {
            plane.addScrapedWorker(t.workerId);
        }
        plane.applyScrape(t.workerId, reading.ranks());
        if (newBlockSize) {
            blockSizeListener.accept(t.workerId, reading.blockSize());
        }
        loraListener.accept(t.workerId, lora);
        return "ok";
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        staleReasons.close();
    }
}
