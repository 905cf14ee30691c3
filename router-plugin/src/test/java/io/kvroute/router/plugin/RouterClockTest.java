package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.LoopbackServer;
import io.kvroute.router.config.RouterOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The router runs on one injected clock: the front door reads the start of a request from it and the
 * dispatch core's {@code Exchange} measures the end on it, so the durations it reports are that
 * clock's. A fake clock that jumps {@link #STEP_SECONDS} on every read, far from the system clock's
 * epoch, shows it: real Jetty servers on loopback, a stub worker, the router's own {@code /metrics}.
 */
class RouterClockTest {

    private static final long STEP_SECONDS = 1000;
    /** Far from any System.nanoTime() value: a duration mixing the two clocks is off by decades. */
    private static final long EPOCH_NANOS = Long.MAX_VALUE / 4;
    private static final Pattern SUM = Pattern.compile(
            "(?m)^kvroute_request_duration_seconds_sum\\{([^}]*)\\} (\\S+)$");

    private final AtomicLong now = new AtomicLong(EPOCH_NANOS);
    private final LongSupplier jumpingClock = () -> now.addAndGet(STEP_SECONDS * 1_000_000_000L);
    private final HttpClient http = HttpClient.newHttpClient();
    private Server worker;
    private RouterMain.RunningRouter router;

    @BeforeEach
    void start() throws Exception {
        worker = LoopbackServer.start(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String path = Request.getPathInContext(request);
                boolean completion = path.equals("/v1/completions");
                response.setStatus(completion || path.equals("/health") ? 200 : 404);
                response.getHeaders().put("Content-Type", "application/json");
                response.write(true, java.nio.ByteBuffer.wrap((completion
                        ? "{\"id\":\"c\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                                + "\"text\":\"hi\",\"finish_reason\":\"stop\"}]}"
                        : "{}").getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        var config = RouterOptions.parse("--port", "0", "--worker-urls", LoopbackServer.url(worker),
                "--model-ids", "m", "--load-source", "none");
        router = RouterMain.start(config, KvRouter.create(config, jumpingClock));
    }

    @AfterEach
    void stop() throws Exception {
        router.close();
        worker.stop();
    }

    @Test
    void aRejectionsDuration_isMeasuredOnTheInjectedClock() throws Exception {
        HttpResponse<String> rejected = post("text/plain", "{}");
        assertThat(rejected.statusCode()).isEqualTo(415);
        assertThat(durationSeconds("rejected")).isBetween((double) STEP_SECONDS, 1e7);
    }

    @Test
    void aServedRequestsDuration_startsAtTheFrontDoorOnTheClockExchangeEndsItOn() throws Exception {
        await().atMost(Duration.ofSeconds(10)).until(() -> get("/readyz").statusCode() == 200);
        HttpResponse<String> served = post("application/json", "{\"model\":\"m\",\"prompt\":\"hi\",\"max_tokens\":1}");
        assertThat(served.statusCode()).as(served.body()).isEqualTo(200);
        // Exchange subtracts the front door's start from its own clock: both must be the injected one. The
        // duration is recorded when the exchange completes, which may be just after the client has the answer.
        await().atMost(Duration.ofSeconds(5)).ignoreExceptions()
                .untilAsserted(() -> assertThat(durationSeconds("ok")).isBetween((double) STEP_SECONDS, 1e7));
    }

    private HttpResponse<String> post(String contentType, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(router.baseUrl() + "/v1/completions"))
                .header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(router.baseUrl() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The duration sum of /v1/completions requests with {@code outcome}, from the router's /metrics. */
    private double durationSeconds(String outcome) throws Exception {
        String metrics = get("/metrics").body();
        Matcher m = SUM.matcher(metrics);
        while (m.find()) {
            if (m.group(1).contains("endpoint=\"/v1/completions\"") && m.group(1).contains("outcome=\"" + outcome + "\"")) {
                return Double.parseDouble(m.group(2));
            }
        }
        throw new AssertionError("no duration for outcome " + outcome + " in\n" + metrics);
    }
}
