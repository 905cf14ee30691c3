package io.kvroute.it.resilience;

import static io.kvroute.it.resilience.ScriptedWorker.Script.BAD_REQUEST_400;
import static io.kvroute.it.resilience.ScriptedWorker.Script.BODY_THEN_DIE;
import static io.kvroute.it.resilience.ScriptedWorker.Script.BUSY_429;
import static io.kvroute.it.resilience.ScriptedWorker.Script.OK;
import static io.kvroute.it.resilience.ScriptedWorker.Script.STREAM_THEN_DIE;
import static io.kvroute.it.resilience.ScriptedWorker.Script.STREAM_THEN_STALL;
import static io.kvroute.it.resilience.ScriptedWorker.Script.UNAVAILABLE_503;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Retries on another worker (503, busy, connect failure) with the retry counters, exhaustion with
 * a clear error, no retry for a client 4xx or after the first byte, and the stream idle timeout.
 * Health checks are effectively off (one probe at start) so only the data path decides.
 */
class RetryAndTimeoutTest {

    private static final List<String> ROUTER = List.of("--policy", "round_robin", "--health-check-interval-secs", "3600",
            "--retry-initial-backoff-ms", "5", "--retry-max-backoff-ms", "50");
    private static Client client;

    @BeforeAll
    static void startClient() throws Exception {
        client = new Client(30);
    }

    @AfterAll
    static void stopClient() throws Exception {
        client.close();
    }

    @Test
    void worker503_isRetriedOnAnotherWorker_andRetriesTotalCountsEachRetry() throws Exception {
        try (Fleet fleet = Fleet.start(0, List.of(), List.of(UNAVAILABLE_503, OK), ROUTER)) {
            ScriptedWorker failing = fleet.scripted.get(0);
            ScriptedWorker good = fleet.scripted.get(1);
            for (int i = 0; i < 8; i++) {
                Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(i % 2 == 0, 3));
                assertThat(reply.status()).as(reply.body()).isEqualTo(200);
                assertThat(reply.header("x-kvroute-worker")).isEqualTo(good.baseUrl());
                assertThat(reply.body()).contains(i % 2 == 0 ? "[DONE]" : "chat.completion");
            }
            assertThat(failing.hits()).as("round robin sends some first attempts to the failing worker").isPositive();
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total")).isEqualTo(failing.hits());
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total", "cause=\"status_503\"")).isEqualTo(failing.hits());
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_exhausted_total")).isZero();
            assertThat(good.hits()).isEqualTo(8);
        }
    }

    @Test
    void busyAnswer_isRetriedOnAnotherWorker() throws Exception {
        try (Fleet fleet = Fleet.start(0, List.of(), List.of(BUSY_429, OK), ROUTER)) {
            for (int i = 0; i < 6; i++) {
                assertThat(client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 3)).status()).isEqualTo(200);
            }
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total", "cause=\"busy\""))
                    .isEqualTo(fleet.scripted.get(0).hits()).isPositive();
        }
    }

    @Test
    void allWorkersFailing_exhaustsRetries_withAClear503() throws Exception {
        try (Fleet fleet = Fleet.start(0, List.of(), List.of(UNAVAILABLE_503, UNAVAILABLE_503), ROUTER)) {
            Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 3));
            assertThat(reply.status()).isEqualTo(503);
            assertThat(reply.isOpenAiError()).as(reply.body()).isTrue();
            assertThat(fleet.scripted.get(0).hits() + fleet.scripted.get(1).hits())
                    .as("--retry-max-attempts defaults to 3").isEqualTo(3);
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total")).isEqualTo(2);
            awaitMetric(fleet, "kvroute_retries_exhausted_total", 1);
        }
    }

    @Test
    void allWorkersUnreachable_exhaustsRetries_withAClear502() throws Exception {
        try (Fleet fleet = Fleet.start(2, List.of(), List.of(), ROUTER)) {
            fleet.killMock(0);
            fleet.killMock(1);
            Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(true, 3));
            assertThat(reply.status()).isEqualTo(502);
            assertThat(reply.isOpenAiError()).as(reply.body()).isTrue();
            assertThat(reply.json().path("error").path("message").asText()).contains("unreachable");
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total", "cause=\"connect\"")).isEqualTo(2);
            awaitMetric(fleet, "kvroute_retries_exhausted_total", 1);
        }
    }

    @Test
    void worker4xx_isRelayedVerbatim_notRetried_andDoesNotOpenTheBreaker() throws Exception {
        List<String> args = new java.util.ArrayList<>(ROUTER);
        args.addAll(List.of("--cb-failure-threshold", "2"));
        try (Fleet fleet = Fleet.start(0, List.of(), List.of(BAD_REQUEST_400), args)) {
            ScriptedWorker worker = fleet.scripted.get(0);
            for (int i = 0; i < 6; i++) {
                Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(i % 2 == 0, 3));
                assertThat(reply.status()).isEqualTo(400);
                assertThat(reply.isOpenAiError()).isTrue();
                assertThat(reply.json().path("error").path("message").asText()).isEqualTo("scripted: your request is wrong");
            }
            assertThat(worker.hits()).isEqualTo(6);
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total")).isZero();
            assertThat(Scrape.sum(client, fleet, "kvroute_worker_breaker_state")).isZero();
            assertThat(Scrape.sum(client, fleet, "kvroute_worker_breaker_transitions_total")).isZero();
            assertThat(client.get(fleet.url("/readyz")).status()).isEqualTo(200);
        }
    }

    @Test
    void failureAfterTheFirstByte_isNeverRetried_andEndsTheStreamWithAnErrorEvent() throws Exception {
        try (Fleet fleet = Fleet.start(0, List.of(), List.of(STREAM_THEN_DIE, OK), ROUTER)) {
            ScriptedWorker dying = fleet.scripted.get(0);
            ScriptedWorker good = fleet.scripted.get(1);
            int fromDying = 0;
            for (int i = 0; i < 6; i++) {
                Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(true, 3));
                assertThat(reply.status()).isEqualTo(200);
                if (dying.baseUrl().equals(reply.header("x-kvroute-worker"))) {
                    fromDying++;
                    assertThat(reply.body()).contains("\"one\"").contains("\"two\"").doesNotContain("[DONE]");
                    assertThat(reply.body().strip()).contains("data: {\"error\"").contains("mid-stream");
                } else {
                    assertThat(reply.body()).endsWith("data: [DONE]\n\n");
                }
            }
            assertThat(fromDying).isPositive().isEqualTo(dying.hits());
            assertThat(good.hits()).as("no streamed request was replayed elsewhere").isEqualTo(6 - fromDying);
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total")).isZero();
        }
    }

    @Test
    void nonStreamingWorkerDyingMidBody_isNeverRetried_andTheClientSeesATruncatedAnswer() throws Exception {
        // The relay forwards the worker's Content-Length: a short body must still reach the client as a
        // failed exchange, never as a complete-looking 200 and never as a hang.
        try (Fleet fleet = Fleet.start(0, List.of(), List.of(BODY_THEN_DIE, OK), ROUTER)) {
            ScriptedWorker dying = fleet.scripted.get(0);
            int fromDying = 0;
            for (int i = 0; i < 6; i++) {
                java.util.concurrent.CompletableFuture<Client.Reply> sent =
                        client.postAsync(fleet.url("/v1/chat/completions"), Client.chat(false, 3));
                Client.Reply reply;
                try {
                    reply = sent.get(40, java.util.concurrent.TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException failedWithoutStatus) {
                    fromDying++;
                    continue;
                }
                if (reply.failure() != null || reply.status() != 200) {
                    fromDying++;
                    assertThat(reply.body()).doesNotContain("\"finish_reason\"");
                } else {
                    assertThat(reply.header("content-length")).isEqualTo(
                            String.valueOf(reply.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length));
                    assertThat(reply.json().path("choices").path(0).path("finish_reason").asText()).isEqualTo("stop");
                }
            }
            assertThat(fromDying).as("every answer from the dying worker failed at the client").isPositive()
                    .isEqualTo(dying.hits());
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total")).isZero();
        }
    }

    @Test
    void stalledUpstreamStream_endsWithAnSseErrorEventAfterTheIdleTimeout() throws Exception {
        List<String> args = new java.util.ArrayList<>(ROUTER);
        args.addAll(List.of("--stream-idle-timeout-secs", "1"));
        try (Fleet fleet = Fleet.start(0, List.of(), List.of(STREAM_THEN_STALL), args)) {
            long start = System.nanoTime();
            Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(true, 3));
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(reply.status()).isEqualTo(200);
            assertThat(reply.body()).contains("\"one\"").contains("data: {\"error\"").doesNotContain("[DONE]");
            assertThat(reply.body()).contains("\"code\":504");
            assertThat(tookMillis).as("ended by the 1 s idle timeout, not the 30 s client timeout").isLessThan(25_000);
            awaitMetric(fleet, "kvroute_upstream_errors_total", 1, "kind=\"timeout\"");
        }
    }

    /**
     * Waits for a counter the router bumps just after the last byte went out (so it may trail the
     * client's reply by a moment), then checks it is exactly {@code expected}.
     */
    private static void awaitMetric(Fleet fleet, String name, double expected, String... labelParts) {
        await().atMost(java.time.Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(Scrape.sum(client, fleet, name, labelParts)).isEqualTo(expected));
    }

    /**
     * Regression: the stream idle timeout was applied to non-streaming requests too, whose worker
     * is silent until the whole answer is ready, so any generation longer than the idle timeout was
     * failed with 504 (and replayed on other workers first) although the request timeout allowed it.
     */
    @Test
    void streamIdleTimeout_doesNotCutANonStreamingRequestThatIsSilentUntilDone() throws Exception {
        List<String> args = new java.util.ArrayList<>(ROUTER);
        args.addAll(List.of("--stream-idle-timeout-secs", "1", "--request-timeout-secs", "60"));
        try (Fleet fleet = Fleet.start(1, List.of("--decode-ms-per-step", "250"), List.of(), args)) {
            Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 10));
            assertThat(reply.status()).as(reply.body()).isEqualTo(200);
            assertThat(reply.json().path("usage").path("completion_tokens").asInt()).isEqualTo(10);
            assertThat(fleet.mocks.get(0).handler().requests()).as("not replayed").isEqualTo(1);
        }
    }
}
