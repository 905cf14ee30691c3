package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.worker.CircuitBreaker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fault drills 1–3 (docs/operations.md) on in-process workers: a worker killed mid-stream, a worker killed
 * under 200 concurrent requests, and a flapping worker driving its breaker open and half-open.
 * (Drill 4, load-report loss, belongs to the load plane and is not here.)
 */
class FaultDrillTest {

    private static Client client;

    @BeforeAll
    static void startClient() throws Exception {
        client = new Client(60);
    }

    @AfterAll
    static void stopClient() throws Exception {
        client.close();
    }

    /** Drill 1. */
    @Test
    void workerKilledMidStream_clientGetsAnSseErrorPromptly_andLaterRequestsGoToHealthyWorkers() throws Exception {
        try (Fleet fleet = Fleet.start(2, List.of("--decode-ms-per-step", "25"), List.of(),
                List.of("--health-check-interval-secs", "0.2", "--health-failure-threshold", "1"))) {
            CountDownLatch firstChunk = new CountDownLatch(1);
            CompletableFuture<Client.Reply> live = client.send("POST", fleet.url("/v1/chat/completions"), "application/json",
                    Client.chat(true, 2000).getBytes(StandardCharsets.UTF_8), firstChunk);
            assertThat(firstChunk.await(20, TimeUnit.SECONDS)).isTrue();
            int victim = fleet.router.router().inFlight().get(Fleet.idOf(fleet.mocks.get(0).baseUrl())) == 1 ? 0 : 1;
            String survivor = fleet.mocks.get(1 - victim).baseUrl();
            long killedAt = System.nanoTime();
            fleet.killMock(victim);
            // 2,000 tokens at 25 ms would take 50 s more; the error must come long before that
            Client.Reply cut = live.get(15, TimeUnit.SECONDS);
            long afterKillMillis = (System.nanoTime() - killedAt) / 1_000_000;
            assertThat(cut.status()).isEqualTo(200);
            assertThat(cut.body()).contains("chat.completion.chunk").contains("data: {\"error\"").doesNotContain("[DONE]");
            assertThat(afterKillMillis).as("error event after the kill").isLessThan(15_000);
            for (int i = 0; i < 10; i++) {
                Client.Reply next = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(i % 2 == 0, 2));
                assertThat(next.status()).as(next.body()).isEqualTo(200);
                assertThat(next.header("x-kvroute-worker")).isEqualTo(survivor);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> fleet.routerInFlight() == 0);
        }
    }

    /** Drill 2. */
    @Test
    void workerDownWith200RequestsInFlight_everyRequestSucceedsOrGetsAClearError_noneLost() throws Exception {
        try (Fleet fleet = Fleet.start(3, List.of("--decode-ms-per-step", "10"), List.of(),
                List.of("--health-check-interval-secs", "0.5", "--health-failure-threshold", "1"))) {
            SplittableRandom random = new SplittableRandom(7);
            List<CompletableFuture<Client.Reply>> replies = new ArrayList<>();
            AtomicInteger completed = new AtomicInteger();
            for (int i = 0; i < 200; i++) {
                CompletableFuture<Client.Reply> reply = client.postAsync(fleet.url("/v1/chat/completions"),
                        Client.chat(false, 5 + random.nextInt(80)));
                reply.whenComplete((r, e) -> completed.incrementAndGet());
                replies.add(reply);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> completed.get() >= 10);
            int inFlightOnVictim = fleet.router.router().inFlight().get(Fleet.idOf(fleet.mocks.get(0).baseUrl()));
            fleet.killMock(0);
            int ok = 0;
            int clearErrors = 0;
            List<String> lost = new ArrayList<>();
            for (CompletableFuture<Client.Reply> future : replies) {
                try {
                    Client.Reply reply = future.get(90, TimeUnit.SECONDS);
                    if (reply.status() == 200 && reply.failure() == null
                            && reply.json().path("usage").path("completion_tokens").asInt() > 0) {
                        ok++;
                    } else if (reply.status() >= 500 && reply.isOpenAiError()) {
                        clearErrors++;
                    } else {
                        lost.add(reply.status() + " " + reply.body());
                    }
                } catch (Exception e) {
                    lost.add(e.toString());
                }
            }
            assertThat(lost).as("requests that hung or ended without a clear answer").isEmpty();
            assertThat(ok + clearErrors).isEqualTo(200);
            assertThat(inFlightOnVictim).as("the victim had work in flight when it died").isPositive();
            assertThat(Scrape.sum(client, fleet, "kvroute_retries_total")).as("in-flight work was retried").isPositive();
            assertThat(ok).as("retries rescue the victim's work (%d clear errors)", clearErrors).isGreaterThanOrEqualTo(180);
            await().atMost(Duration.ofSeconds(5)).until(() -> fleet.routerInFlight() == 0
                    && fleet.router.router().activeRequests() == 0);
        }
    }

    /** Drill 3. */
    @Test
    void flappingWorker_drivesItsBreakerOpenAndHalfOpen_trafficShiftsAwayAndComesBack() throws Exception {
        try (Fleet fleet = Fleet.start(2, List.of("--decode-ms-per-step", "2"), List.of(),
                List.of("--policy", "round_robin", "--health-check-interval-secs", "3600", "--cb-failure-threshold", "2",
                        "--cb-timeout-secs", "0.5", "--cb-success-threshold", "1", "--retry-initial-backoff-ms", "5"))) {
            String flapperUrl = fleet.mocks.get(1).baseUrl();
            String flapperId = Fleet.idOf(flapperUrl);
            AtomicBoolean flapping = new AtomicBoolean(true);
            AtomicBoolean sawOpen = new AtomicBoolean();
            Map<String, AtomicInteger> servedBy = new ConcurrentHashMap<>();
            List<String> unclear = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicInteger sent = new AtomicInteger();
            List<Thread> loops = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread loop = new Thread(() -> {
                    while (flapping.get()) {
                        sent.incrementAndGet();
                        try {
                            Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 2));
                            if (reply.status() == 200) {
                                servedBy.computeIfAbsent(reply.header("x-kvroute-worker"), k -> new AtomicInteger()).incrementAndGet();
                            } else if (!reply.isOpenAiError()) {
                                unclear.add(reply.status() + " " + reply.body());
                            }
                        } catch (Exception e) {
                            unclear.add(e.toString());
                        }
                        if (fleet.router.router().breakers().state(flapperId) == CircuitBreaker.State.OPEN) {
                            sawOpen.set(true);
                        }
                    }
                }, "flap-client-" + t);
                loop.start();
                loops.add(loop);
            }
            for (int cycle = 0; cycle < 3; cycle++) {
                Thread.sleep(1_000);
                fleet.killMock(1);
                Thread.sleep(1_000);
                fleet.reviveMock(1);
            }
            flapping.set(false);
            for (Thread loop : loops) {
                loop.join(30_000);
            }
            assertThat(unclear).as("every request succeeded or got a clear error").isEmpty();
            assertThat(sawOpen).as("the breaker was seen open").isTrue();
            assertThat(Scrape.sum(client, fleet, "kvroute_worker_breaker_transitions_total", "to=\"open\"")).isPositive();
            assertThat(Scrape.sum(client, fleet, "kvroute_worker_breaker_transitions_total", "to=\"half_open\""))
                    .as("the cool-down ended in half-open").isPositive();
            assertThat(Scrape.sum(client, fleet, "kvroute_worker_breaker_transitions_total", "from=\"half_open\""))
                    .as("trial traffic went through half-open").isPositive();
            assertThat(servedBy.get(fleet.mocks.get(0).baseUrl()).get()).as("the stable worker took over")
                    .isGreaterThan(servedBy.getOrDefault(flapperUrl, new AtomicInteger()).get());
            // the flapper is up for good: after the cool-down, trial traffic closes the breaker and it serves again
            long servedBefore = fleet.mocks.get(1).handler().requests();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> {
                client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1));
                return fleet.router.router().breakers().state(flapperId) == CircuitBreaker.State.CLOSED
                        && fleet.mocks.get(1).handler().requests() > servedBefore;
            });
            assertThat(Scrape.sum(client, fleet, "kvroute_worker_breaker_state", "worker=\"" + flapperUrl + "\"")).isZero();
        }
    }
}
