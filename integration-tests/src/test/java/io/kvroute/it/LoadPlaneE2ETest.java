package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Engine load reports from mock workers to the router over real ZeroMQ sockets on loopback. */
class LoadPlaneE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static String chat(int maxTokens) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"queue me up please\"}],\"max_tokens\":" + maxTokens
                + ",\"stream\":true}";
    }

    private static JsonNode loads(Http http, TestFleet fleet) throws Exception {
        return JSON.readTree(http.get(fleet.url("/v1/loads")).getContentAsString()).path("workers");
    }

    @Test
    void workerUnderLoad_showsAFreshNonZeroQueueWithinOneSecond() throws Exception {
        // Two request slots and slow decode: most of 12 requests must wait in the engine's queue.
        try (TestFleet fleet = TestFleet.start(1, List.of("--running-max-req-size", "2", "--decode-ms-per-step", "50"),
                List.of("--policy", "power_of_two", "--health-check-interval-secs", "0.2"));
                Http http = new Http()) {
            // the router learns the worker's load endpoint from /server_info, then subscribes
            // (the load plane replaces a SUB socket stuck in the JeroMQ handshake after 3 s of silence)
            await().atMost(Duration.ofSeconds(20)).until(() -> loads(http, fleet).get(0).path("fresh").asBoolean());
            List<CompletableFuture<Http.Reply>> replies = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                replies.add(http.stream(fleet.url("/v1/chat/completions"), chat(40)));
            }
            long sent = System.nanoTime();
            await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20)).until(() -> {
                JsonNode worker = loads(http, fleet).get(0);
                return worker.path("fresh").asBoolean() && worker.path("num_waiting_reqs").asInt() > 0;
            });
            assertThat((System.nanoTime() - sent) / 1_000_000).isLessThan(1000);
            for (CompletableFuture<Http.Reply> reply : replies) {
                assertThat(reply.get(60, TimeUnit.SECONDS).status()).isEqualTo(200);
            }
        }
    }

    @Test
    void reportsThatStop_fallBackToRouterLocalLoad_andRoutingKeepsServing() throws Exception {
        try (TestFleet fleet = TestFleet.start(2, List.of("--decode-ms-per-step", "2"),
                List.of("--policy", "power_of_two", "--load-freshness-secs", "1", "--health-check-interval-secs", "0.2"));
                Http http = new Http()) {
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                JsonNode workers = loads(http, fleet);
                return workers.get(0).path("fresh").asBoolean() && workers.get(1).path("fresh").asBoolean();
            });
            for (int i = 0; i < 6; i++) {
                assertThat(http.postJson(fleet.url("/v1/chat/completions"),
                        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}").getStatus()).isEqualTo(200);
            }
            String before = http.get(fleet.url("/metrics")).getContentAsString();
            assertThat(before).containsPattern("kvroute_pressure_source_total\\{policy=\"power_of_two\",source=\"(native_queue_tokens|estimated_prefill_queue_ms)\"");
            fleet.workers.forEach(w -> w.stopLoadReports());
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                JsonNode workers = loads(http, fleet);
                return !workers.get(0).path("fresh").asBoolean() && !workers.get(1).path("fresh").asBoolean();
            });
            assertThat(loads(http, fleet).get(0).path("pressure_source").asText()).isEqualTo("router_local");
            for (int i = 0; i < 6; i++) {
                assertThat(http.postJson(fleet.url("/v1/chat/completions"),
                        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}").getStatus()).isEqualTo(200);
            }
            assertThat(http.get(fleet.url("/metrics")).getContentAsString())
                    .contains("kvroute_pressure_source_total{policy=\"power_of_two\",source=\"router_local\"}");
        }
    }
}
