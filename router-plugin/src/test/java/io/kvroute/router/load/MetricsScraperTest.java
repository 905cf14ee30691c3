package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The /metrics load source end to end over real HTTP: a Jetty server serving exposition text, the
 * scraper on a real Jetty client, the real load plane on a fake clock. Scrapes are started by calling
 * {@code tick()} (the scheduler is not started), so every scrape is one the test asked for.
 */
class MetricsScraperTest {
    private static final long MS = 1_000_000L;
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicReference<String> body = new AtomicReference<>("");
    private final AtomicInteger status = new AtomicInteger(200);
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicReference<org.eclipse.jetty.http.HttpFields> lastHeaders = new AtomicReference<>();
    /** When positive, the body goes out in flushed pieces of this many bytes (chunked transfer encoding). */
    private final AtomicInteger pieceBytes = new AtomicInteger();
    /** While set, /metrics answers are held (never written) until the test lets them go. */
    private final java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean();
    private final List<Callback> held = new java.util.concurrent.CopyOnWriteArrayList<>();
    private Server server;
    private HttpClient client;
    private LoadPlane plane;
    private MetricsScraper scraper;
    private String baseUrl;

    @BeforeEach
    void setUp() throws Exception {
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                requests.incrementAndGet();
                lastHeaders.set(request.getHeaders().asImmutable());
                if (!Request.getPathInContext(request).equals("/metrics")) {
                    response.setStatus(404);
                    callback.succeeded();
                    return true;
                }
                if (hold.get()) {
                    held.add(callback); // no answer: the scraper's timeout fires
                    return true;
                }
                response.setStatus(status.get());
                byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
                int piece = pieceBytes.get();
                if (piece <= 0) {
                    response.write(true, ByteBuffer.wrap(bytes), callback);
                    return true;
                }
                try (java.io.OutputStream out = Content.Sink.asOutputStream(response)) {
                    for (int pos = 0; pos < bytes.length; pos += piece) {
                        out.write(bytes, pos, Math.min(piece, bytes.length - pos));
                        out.flush();
                    }
                    callback.succeeded();
                } catch (java.io.IOException e) {
                    callback.failed(e);
                }
                return true;
            }
        });
        server.start();
        baseUrl = "http://127.0.0.1:" + connector.getLocalPort();
        client = MetricsScraper.newHttpClient(1000); // the router's scrape client
        client.start();
        plane = new LoadPlane(LoadPlaneConfig.defaults().withPollTimeout(Duration.ofMillis(5)), clock::get, registry);
        plane.start();
        scraper = new MetricsScraper(plane, client, 200, 1000, 1000, clock::get, registry);
    }

    @AfterEach
    void tearDown() throws Exception {
        scraper.close();
        plane.close();
        client.stop();
        server.stop();
    }

    private double outcome(String o) {
        return registry.get("kvroute.load.scrapes").tag("outcome", o).counter().count();
    }

    private void scrapeOnce(String expectedOutcome) {
        double before = outcome(expectedOutcome);
        scraper.tick();
        await().atMost(WAIT).until(() -> outcome(expectedOutcome) > before);
    }

    @Test
    void vllmScrape_feedsOneRankPerEngineLabel_withTheSourceInTheView() throws Exception {
        body.set(new String(PrometheusTextParserTest.fixture("vllm-dp2.prom"), StandardCharsets.UTF_8));
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);

        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());

        EngineLoadSnapshot snap = plane.snapshot();
        WorkerLoad load = snap.fresh("w-v").orElseThrow();
        assertThat(load.numWaitingReqs()).isEqualTo(12);
        assertThat(load.numRunningReqs()).isEqualTo(9);
        assertThat(load.maxTotalNumTokens()).isEqualTo(2L * 16 * 2048);
        assertThat(snap.table().get("w-v").dpSize()).isEqualTo(2);
        Map<String, Object> view = plane.view().get(0);
        assertThat(view).containsEntry("load_source", "metrics").containsEntry("stale_saturated", false)
                .containsEntry("dp_size", 2);
        assertThat(registry.get("kvroute.load.workers.by.source").tag("source", "metrics").gauge().value()).isEqualTo(1);
    }

    /** vllm:cache_config_info's block size reaches the listener once per change (it confirms KV-event templates). */
    @Test
    void blockSizeFromCacheConfigInfo_isReportedOncePerChange() throws Exception {
        java.util.List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        scraper.onBlockSize((id, size) -> heard.add(id + "=" + size));
        body.set(new String(PrometheusTextParserTest.fixture("vllm-dp2.prom"), StandardCharsets.UTF_8));
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("ok");
        clock.addAndGet(Duration.ofSeconds(1).toNanos());
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> !heard.isEmpty());
        assertThat(heard).containsExactly("w-v=16");
        body.set("vllm:num_requests_waiting{engine=\"0\"} 0\nvllm:num_requests_running{engine=\"0\"} 0\n"
                + "vllm:cache_config_info{block_size=\"32\",engine=\"0\",num_gpu_blocks=\"10\"} 1.0\n");
        clock.addAndGet(Duration.ofSeconds(1).toNanos());
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> heard.size() == 2);
        assertThat(heard).containsExactly("w-v=16", "w-v=32");
    }

    @Test
    void readingOlderThanTheStalenessBound_countsAsSaturated() throws Exception {
        body.set("vllm:num_requests_waiting{engine=\"0\"} 0\nvllm:num_requests_running{engine=\"0\"} 0\n");
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());
        assertThat(plane.snapshot().countsAsSaturated("w-v")).isFalse();

        clock.addAndGet(LoadPlaneConfig.DEFAULT_METRICS_STALENESS.toNanos() + MS);

        EngineLoadSnapshot snap = plane.snapshot();
        assertThat(snap.fresh("w-v")).isEmpty();
        assertThat(snap.countsAsSaturated("w-v")).isTrue();
        assertThat(plane.view().get(0)).containsEntry("stale_saturated", true);
        assertThat(registry.get("kvroute.load.workers.stale.saturated").gauge().value()).isEqualTo(1);
    }

    private double staleBy(String reason) {
        return registry.get("kvroute.load.workers.stale.saturated.by.reason").tag("reason", reason).gauge().value();
    }

    /** Asserts the stale worker is counted under {@code reason} alone, and in the untagged total. */
    private void assertStaleFor(String reason) {
        for (String r : StaleScrapeReasons.REASONS) {
            assertThat(staleBy(r)).as(r + " while stale for " + reason).isEqualTo(r.equals(reason) ? 1 : 0);
        }
        assertThat(registry.get("kvroute.load.workers.stale.saturated").gauge().value()).isEqualTo(1);
    }

    /**
     * A registered worker gone stale carries its last scrape's failure as the reason: pending (the last
     * scrape was good), then http_error, parse_error, timeout (the server holds the answer past the 1 s
     * timeout on the fake clock) and connect (the server stopped); a good scrape makes it fresh, in no reason.
     */
    @Test
    void staleWorker_isCountedUnderItsLastScrapesFailure() throws Exception {
        String good = "vllm:num_requests_waiting{engine=\"0\"} 0\nvllm:num_requests_running{engine=\"0\"} 0\n";
        body.set(good);
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());
        for (String r : StaleScrapeReasons.REASONS) {
            assertThat(staleBy(r)).as(r + " while fresh").isZero();
        }

        clock.addAndGet(LoadPlaneConfig.DEFAULT_METRICS_STALENESS.toNanos() + MS);
        assertStaleFor("pending");

        status.set(500);
        clock.addAndGet(5000 * MS);
        scrapeOnce("http_status");
        assertStaleFor("http_error");

        status.set(200);
        body.set("<html>not metrics</html>\n");
        clock.addAndGet(5000 * MS);
        scrapeOnce("malformed");
        assertStaleFor("parse_error");

        hold.set(true);
        clock.addAndGet(5000 * MS);
        scraper.tick(); // starts the scrape the server holds
        clock.addAndGet(1000 * MS); // its 1 s deadline
        scrapeOnce("timeout");
        assertStaleFor("timeout");
        hold.set(false);
        held.forEach(Callback::succeeded);

        body.set(good);
        clock.addAndGet(5000 * MS);
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());
        for (String r : StaleScrapeReasons.REASONS) {
            assertThat(staleBy(r)).as(r + " fresh again").isZero();
        }

        server.stop();
        clock.addAndGet(5000 * MS);
        scrapeOnce("connect");
        assertStaleFor("connect");
    }

    /**
     * The tick, not a timer of the HTTP client, ends a scrape the engine never answers: a tick 1 ms before
     * the 1 s deadline (on the fake clock) leaves it running and starts no second request; the first tick
     * at the deadline counts it {@code timeout}, and the worker's next scrape waits out the backoff.
     */
    @Test
    void aWorkerThatNeverAnswers_isCountedTimeoutByTheFirstTickAtItsDeadline() {
        hold.set(true);
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scraper.tick();
        await().atMost(WAIT).until(() -> held.size() == 1);

        clock.addAndGet(999 * MS);
        scraper.tick();
        assertThat(outcome("timeout")).isZero();
        assertThat(requests.get()).as("one scrape in flight per worker").isEqualTo(1);

        clock.addAndGet(MS);
        scrapeOnce("timeout");
        assertThat(requests.get()).isEqualTo(1);

        hold.set(false);
        body.set("vllm:num_requests_waiting 1\nvllm:num_requests_running 0\n");
        clock.addAndGet(200 * MS); // 1.2 s after the start: still inside the doubled (400 ms) backoff
        scraper.tick();
        assertThat(requests.get()).isEqualTo(1);
        clock.addAndGet(200 * MS);
        scrapeOnce("ok");
    }

    /** Started, the scraper's own tick (every quarter interval) aborts a held scrape once the fake clock passes its deadline. */
    @Test
    void theStartedScheduler_abortsAScrapePastItsDeadline() {
        hold.set(true);
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scraper.start();
        await().atMost(WAIT).until(() -> held.size() == 1);
        clock.addAndGet(1000 * MS);
        await().atMost(WAIT).until(() -> outcome("timeout") == 1);
    }

    /**
     * Removing a worker ends its hanging scrape (the tick no longer visits it): re-added at the same address, whose
     * one connection the hanging scrape would otherwise keep, it is scraped again at once.
     */
    @Test
    void removingAWorker_abortsItsHangingScrape_soTheConnectionServesItsNextRegistration() {
        hold.set(true);
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scraper.tick();
        await().atMost(WAIT).until(() -> held.size() == 1);
        scraper.removeWorker("w-v");

        hold.set(false);
        body.set("vllm:num_requests_waiting 1\nvllm:num_requests_running 0\n");
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("ok");
        assertThat(outcome("timeout")).isZero();
    }

    /**
     * The router's scrape client sends the worker's Host and the text format's Accept, and no User-Agent
     * or Accept-Encoding: prometheus_client then answers uncompressed, so the body bound counts wire bytes.
     */
    @Test
    void aScrape_sendsHostAndAccept_andNoUserAgentOrAcceptEncoding() {
        body.set("vllm:num_requests_waiting 1\nvllm:num_requests_running 0\n");
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("ok");

        org.eclipse.jetty.http.HttpFields headers = lastHeaders.get();
        assertThat(headers.get("Host")).isEqualTo(baseUrl.substring("http://".length()));
        assertThat(headers.get("Accept")).isEqualTo("text/plain; version=0.0.4");
        assertThat(headers.contains("User-Agent")).isFalse();
        assertThat(headers.contains("Accept-Encoding")).isFalse();
    }

    @Test
    void aBodyArrivingInManySmallChunks_isReadAsAWhole() throws Exception {
        body.set(new String(PrometheusTextParserTest.fixture("vllm-dp2.prom"), StandardCharsets.UTF_8));
        pieceBytes.set(37);
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);

        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());

        WorkerLoad load = plane.snapshot().fresh("w-v").orElseThrow();
        assertThat(load.numWaitingReqs()).isEqualTo(12);
        assertThat(load.numRunningReqs()).isEqualTo(9);
        assertThat(load.maxTotalNumTokens()).isEqualTo(2L * 16 * 2048);
    }

    @Test
    void aBodyOverTheBound_isCountedTooLarge_andTheNextScrapeStillWorks() throws Exception {
        String exposition = new String(PrometheusTextParserTest.fixture("vllm-dp2.prom"), StandardCharsets.UTF_8);
        body.set("# HELP filler a comment line\n".repeat(MetricsScraper.MAX_BODY_BYTES / 29 + 1) + exposition);
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("too_large");
        assertThat(plane.snapshot().workerIds()).isEmpty();

        body.set(exposition);
        clock.addAndGet(5000 * MS);
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());
    }

    @Test
    void failedScrapes_areCountedByReason_andNeverRegisterTheWorker() throws Exception {
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        status.set(404);
        scrapeOnce("http_status");

        status.set(200);
        clock.addAndGet(5000 * MS);
        body.set("<html>not metrics</html>\n");
        scrapeOnce("malformed");

        clock.addAndGet(5000 * MS);
        body.set("sglang:num_queue_reqs 3\nsglang:num_running_reqs 1\n");
        scrapeOnce("missing_metric");

        assertThat(plane.snapshot().workerIds()).as("no usable scrape yet: unknown, not saturated").isEmpty();
        assertThat(plane.snapshot().countsAsSaturated("w-v")).isFalse();
    }

    @Test
    void connectFailure_isCounted_andBacksOff() throws Exception {
        scraper.addWorker("w-dead", "http://127.0.0.1:1", EngineMetricNames.VLLM);
        scrapeOnce("connect");
        clock.addAndGet(200 * MS);
        scraper.tick(); // within the doubled backoff (400 ms): no request
        assertThat(outcome("connect")).isEqualTo(1);
        clock.addAndGet(200 * MS);
        scrapeOnce("connect");
        assertThat(outcome("connect")).isEqualTo(2);
    }

    @Test
    void aRankCountChange_resetsTheWorkersRanks() throws Exception {
        body.set("vllm:num_requests_waiting{engine=\"0\"} 1\nvllm:num_requests_running{engine=\"0\"} 0\n");
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());
        body.set(new String(PrometheusTextParserTest.fixture("vllm-dp2.prom"), StandardCharsets.UTF_8));
        clock.addAndGet(200 * MS);
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().table().get("w-v").dpSize() == 2
                && plane.snapshot().fresh("w-v").isPresent());
        assertThat(plane.snapshot().fresh("w-v").orElseThrow().numWaitingReqs()).isEqualTo(12);
    }

    @Test
    void aLoadStatSubscription_replacesTheScrapedEntry() {
        body.set("vllm:num_requests_waiting 1\nvllm:num_requests_running 0\n");
        scraper.addWorker("w-v", baseUrl, EngineMetricNames.VLLM);
        scrapeOnce("ok");
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w-v").isPresent());

        plane.addWorker("w-v", List.of("tcp://127.0.0.1:1"));
        await().atMost(WAIT).until(() -> plane.snapshot().source("w-v").orElseThrow() == LoadSource.LOADSTAT);
        assertThat(plane.snapshot().countsAsSaturated("w-v")).isFalse();
    }
}
