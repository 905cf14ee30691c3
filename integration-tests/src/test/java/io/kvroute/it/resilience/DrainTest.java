package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.plugin.KvRouter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Graceful drain with live streams: readiness and new requests turn 503 at once, a stream that fits
 * the drain window completes, one that does not is ended with an SSE error event.
 */
class DrainTest {

    /** 25 ms per decode step: a 60-token stream lasts about 1.5 s, a 1,000-token one about 25 s. */
    private static final List<String> SLOW_DECODE = List.of("--decode-ms-per-step", "25");
    private static Client client;

    @BeforeAll
    static void startClient() throws Exception {
        client = new Client(60);
    }

    @AfterAll
    static void stopClient() throws Exception {
        client.close();
    }

    private static String stream(int maxTokens) {
        return Client.chat(true, maxTokens);
    }

    private static CompletableFuture<Client.Reply> startStream(String url, int maxTokens) throws InterruptedException {
        CountDownLatch firstChunk = new CountDownLatch(1);
        CompletableFuture<Client.Reply> reply = client.send("POST", url, "application/json",
                stream(maxTokens).getBytes(StandardCharsets.UTF_8), firstChunk);
        assertThat(firstChunk.await(20, TimeUnit.SECONDS)).as("the stream started").isTrue();
        return reply;
    }

    @Test
    void drain_letsALiveStreamFinish_whileReadyzAndNewRequestsAnswer503() throws Exception {
        try (Fleet fleet = Fleet.start(1, SLOW_DECODE, List.of(), List.of("--shutdown-drain-secs", "30"))) {
            CompletableFuture<Client.Reply> live = startStream(fleet.url("/v1/chat/completions"), 60);
            KvRouter router = fleet.router.router();
            CompletableFuture<Integer> drained = CompletableFuture.supplyAsync(() -> {
                try {
                    return router.drain();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(router::draining);
            Client.Reply ready = client.get(fleet.url("/readyz"));
            assertThat(ready.status()).isEqualTo(503);
            assertThat(ready.json().path("draining").asBoolean()).isTrue();
            Client.Reply refused = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 2));
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.isOpenAiError()).isTrue();
            assertThat(refused.json().path("error").path("message").asText()).contains("shutting down");
            assertThat(Scrape.sum(client, fleet, "kvroute_draining")).isEqualTo(1);

            Client.Reply finished = live.get(60, TimeUnit.SECONDS);
            assertThat(finished.status()).isEqualTo(200);
            assertThat(finished.body()).endsWith("data: [DONE]\n\n").doesNotContain("\"error\"");
            assertThat(finished.body().lines().filter(l -> l.contains("\"content\":\" ")).count()).isEqualTo(60);
            assertThat(drained.get(60, TimeUnit.SECONDS)).as("nothing had to be aborted").isZero();
            await().atMost(Duration.ofSeconds(5)).until(() -> router.activeRequests() == 0);
        }
    }

    @Test
    void drainWindowOver_abortsALongerStreamWithAClearSseErrorEvent() throws Exception {
        try (Fleet fleet = Fleet.start(1, SLOW_DECODE, List.of(), List.of("--shutdown-drain-secs", "1"))) {
            CompletableFuture<Client.Reply> live = startStream(fleet.url("/v1/chat/completions"), 1000);
            long start = System.nanoTime();
            int aborted = fleet.router.router().drain();
            assertThat(aborted).isEqualTo(1);
            Client.Reply cut = live.get(30, TimeUnit.SECONDS);
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(cut.status()).isEqualTo(200);
            assertThat(cut.body()).doesNotContain("[DONE]").contains("data: {\"error\"").contains("drain period");
            assertThat(tookMillis).as("ended by the 1 s drain window, not by the 25 s stream").isLessThan(20_000);
            // the worker saw the router go away and stopped generating
            await().atMost(Duration.ofSeconds(10)).until(() -> fleet.mocks.get(0).handler().abortedRequests() == 1);
        }
    }

    /** The plugin's own stop (Jetty stopping a host server the router is mounted in) drains too. */
    @Test
    void hostServerStop_drainsTheMountedRouter_letsTheStreamFinish() throws Exception {
        MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "25");
        Server host = new Server();
        ServerConnector connector = new ServerConnector(host);
        connector.setHost("127.0.0.1");
        host.addConnector(connector);
        host.setStopTimeout(30_000);
        try {
            KvRouter router = KvRouter.mount(host, RouterOptions.parse("--worker-urls", worker.baseUrl(),
                    "--shutdown-drain-secs", "30"));
            host.start();
            String url = "http://127.0.0.1:" + connector.getLocalPort() + "/v1/chat/completions";
            CompletableFuture<Client.Reply> live = startStream(url, 60);
            CompletableFuture<Void> stopped = CompletableFuture.runAsync(() -> {
                try {
                    host.stop();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(router::draining);
            Client.Reply finished = live.get(60, TimeUnit.SECONDS);
            assertThat(finished.status()).isEqualTo(200);
            assertThat(finished.body()).endsWith("data: [DONE]\n\n");
            stopped.get(60, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(5)).until(() -> router.activeRequests() == 0);
        } finally {
            if (!host.isStopped()) {
                host.stop();
            }
            worker.close();
        }
    }
}
