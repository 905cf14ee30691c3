package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Active health checks: an unhealthy worker leaves routing without losing its in-flight work, and comes back. */
class HealthTest {

    @Test
    void unhealthyWorker_leavesRouting_finishesItsStream_keepsAccountingRight_andComesBack() throws Exception {
        try (Fleet fleet = Fleet.start(2, List.of("--decode-ms-per-step", "20"), List.of(),
                List.of("--policy", "round_robin", "--health-check-interval-secs", "0.2", "--health-failure-threshold", "2",
                        "--health-success-threshold", "2"));
                Client client = new Client(60)) {
            String sickUrl = fleet.mocks.get(0).baseUrl();
            String sickId = Fleet.idOf(sickUrl);
            CompletableFuture<Client.Reply> live = null;
            for (int i = 0; i < 4 && live == null; i++) {
                CountDownLatch firstChunk = new CountDownLatch(1);
                CompletableFuture<Client.Reply> stream = client.send("POST", fleet.url("/v1/chat/completions"), "application/json",
                        Client.chat(true, 150).getBytes(StandardCharsets.UTF_8), firstChunk);
                assertThat(firstChunk.await(20, TimeUnit.SECONDS)).isTrue();
                if (fleet.router.router().inFlight().get(sickId) == 1) {
                    live = stream;
                }
            }
            assertThat(live).as("round robin put a stream on the first worker").isNotNull();

            fleet.mocks.get(0).handler().setHealthy(false); // /health answers 503, the data path still works
            await().atMost(Duration.ofSeconds(10)).until(() -> !fleet.router.router().workers().fleet().isHealthy(sickId));
            assertThat(Scrape.sum(client, fleet, "kvroute_worker_healthy", "worker=\"" + sickUrl + "\"")).isZero();
            long servedBefore = fleet.mocks.get(0).handler().requests();
            for (int i = 0; i < 6; i++) {
                Client.Reply reply = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1));
                assertThat(reply.header("x-kvroute-worker")).isNotEqualTo(sickUrl);
            }
            assertThat(fleet.mocks.get(0).handler().requests()).isEqualTo(servedBefore);

            Client.Reply finished = live.get(30, TimeUnit.SECONDS);
            assertThat(finished.body()).endsWith("data: [DONE]\n\n");
            await().atMost(Duration.ofSeconds(5)).until(() -> fleet.router.router().inFlight().get(sickId) == 0);

            fleet.mocks.get(0).handler().setHealthy(true);
            await().atMost(Duration.ofSeconds(10)).until(() -> fleet.router.router().workers().fleet().isHealthy(sickId));
            await().atMost(Duration.ofSeconds(10)).until(() -> sickUrl.equals(
                    client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1)).header("x-kvroute-worker")));
            await().atMost(Duration.ofSeconds(5)).until(() -> fleet.routerInFlight() == 0);
        }
    }
}
