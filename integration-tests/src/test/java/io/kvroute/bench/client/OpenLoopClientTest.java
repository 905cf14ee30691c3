package io.kvroute.bench.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.bench.scenario.LoopbackOpenAiServer;
import io.kvroute.bench.workload.ChatRequests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class OpenLoopClientTest {

    private static final long MILLIS = 1_000_000L;

    private static List<ScheduledRequest> schedule(int count, long spacingMillis, int maxTokens) {
        List<ScheduledRequest> requests = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            requests.add(new ScheduledRequest(i * spacingMillis * MILLIS, ChatRequests.PATH,
                    ChatRequests.userPrompt("hello " + i, maxTokens), i % 2 == 0 ? "short" : "long"));
        }
        return requests;
    }

    /**
     * 50 requests scheduled 10 ms apart against a server that takes 500 ms each: a closed loop would
     * need 25 s; the open loop sends every request near its scheduled time, so they overlap.
     */
    @Test
    void slowServer_requestsStillLeaveOnSchedule_notSerialized() throws Exception {
        try (LoopbackOpenAiServer server = new LoopbackOpenAiServer(500, 0, 200);
                OpenLoopClient client = new OpenLoopClient(OpenLoopClient.Options.defaults())) {
            client.run(server.baseUrl(), schedule(1, 0, 2), r -> {}); // class loading is not what this test is about
            AtomicInteger completions = new AtomicInteger();
            List<RequestRecord> records = client.run(server.baseUrl(), schedule(50, 10, 2), r -> completions.incrementAndGet());

            assertThat(records).hasSize(50).allSatisfy(r -> assertThat(r.ok()).as(String.valueOf(r)).isTrue());
            assertThat(completions).hasValue(50);
            // every request left within 250 ms of its slot (the whole schedule spans 490 ms, one answer takes 500 ms)
            assertThat(records).allSatisfy(r -> assertThat(r.latenessNanos()).isBetween(0.0, 250.0 * MILLIS));
            long lastSent = records.stream().mapToLong(RequestRecord::sentNanos).max().orElseThrow();
            assertThat(lastSent).isLessThan(490 * MILLIS + 250 * MILLIS);
            // answers overlapped: far more than one request in flight at the server
            assertThat(server.maxInFlight()).isGreaterThan(20);
            // the server's 500 ms delay shows up as latency (a little less: "sent" is stamped after the write returns)
            assertThat(records).allSatisfy(r -> assertThat(r.ttftNanos()).isGreaterThanOrEqualTo(450.0 * MILLIS));
        }
    }

    @Test
    void streaming_timesFirstAndLastTokenAndReadsUsage() throws Exception {
        try (LoopbackOpenAiServer server = new LoopbackOpenAiServer(50, 20, 200);
                OpenLoopClient client = new OpenLoopClient(OpenLoopClient.Options.defaults())) {
            List<RequestRecord> records = client.run(server.baseUrl(), schedule(1, 0, 6), r -> {});

            RequestRecord r = records.get(0);
            assertThat(r.ok()).isTrue();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.outputTokens()).isEqualTo(6);
            assertThat(r.promptTokens()).isEqualTo(100);
            assertThat(r.cachedTokens()).isEqualTo(25);
            assertThat(r.ttftNanos()).isGreaterThanOrEqualTo(40.0 * MILLIS);
            // five gaps of 20 ms between the six tokens
            assertThat(r.lastTokenNanos() - r.firstTokenNanos()).isGreaterThanOrEqualTo(100 * MILLIS);
            assertThat(r.tpotNanos()).isGreaterThanOrEqualTo(20.0 * MILLIS);
            assertThat(r.e2eNanos()).isGreaterThanOrEqualTo(r.ttftNanos());
        }
    }

    /**
     * A caller counting completions in the listener sees every one once run returns, even when the listener is
     * slow: the CI run of a4d2621 saw 49 of 50 because the latch counted down before the listener ran.
     */
    @Test
    void run_returnsOnlyAfterEveryListenerCallHasReturned() throws Exception {
        try (LoopbackOpenAiServer server = new LoopbackOpenAiServer(0, 0, 200);
                OpenLoopClient client = new OpenLoopClient(OpenLoopClient.Options.defaults())) {
            AtomicInteger completions = new AtomicInteger();
            List<RequestRecord> records = client.run(server.baseUrl(), schedule(3, 0, 2), r -> {
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                completions.incrementAndGet();
            });

            assertThat(records).hasSize(3);
            assertThat(completions).hasValue(3);
        }
    }

    /**
     * Each request carries its own headers (a tenant's API key, a priority class) and only its own; a
     * request without headers sends none of another's, and the client's Accept stays.
     */
    @Test
    void perRequestHeaders_reachTheServerWithTheirRequestOnly() throws Exception {
        try (LoopbackOpenAiServer server = new LoopbackOpenAiServer(0, 0, 200);
                OpenLoopClient client = new OpenLoopClient(OpenLoopClient.Options.defaults())) {
            List<ScheduledRequest> requests = List.of(
                    new ScheduledRequest(0, ChatRequests.PATH, ChatRequests.userPrompt("a", 1), "", "",
                            Map.of("Authorization", "Bearer key-a", "x-kvroute-priority", "interactive")),
                    new ScheduledRequest(100 * MILLIS, ChatRequests.PATH, ChatRequests.userPrompt("b", 1), ""),
                    new ScheduledRequest(400 * MILLIS, ChatRequests.PATH, ChatRequests.userPrompt("c", 1), "", "",
                            Map.of("Authorization", "Bearer key-c")).compressedBy(2.0));
            List<RequestRecord> records = client.run(server.baseUrl(), requests, r -> {});

            assertThat(records).allSatisfy(r -> assertThat(r.ok()).as(String.valueOf(r)).isTrue());
            // sent at 0, 100 and 200 ms (400 compressed 2x: compression keeps the headers); on a loaded machine
            // they may arrive in another order, so each arrival's pair of headers is checked, not the order
            List<String> authorization = server.receivedHeader("Authorization");
            List<String> priority = server.receivedHeader("x-kvroute-priority");
            List<String> pairs = new ArrayList<>();
            for (int i = 0; i < authorization.size(); i++) {
                pairs.add(authorization.get(i) + " / " + priority.get(i));
            }
            assertThat(pairs).containsExactlyInAnyOrder(
                    "Bearer key-a / interactive", "null / null", "Bearer key-c / null");
            assertThat(server.receivedHeader("Accept")).allSatisfy(a -> assertThat(a).contains("text/event-stream"));
        }
    }

    @Test
    void plainJsonResponse_countsAsOneTimedAnswer() throws Exception {
        try (LoopbackOpenAiServer server = new LoopbackOpenAiServer(10, 0, 200);
                OpenLoopClient client = new OpenLoopClient(OpenLoopClient.Options.defaults())) {
            byte[] body = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":3}".getBytes();
            List<RequestRecord> records = client.run(server.baseUrl(),
                    List.of(new ScheduledRequest(0, ChatRequests.PATH, body, "")), r -> {});

            RequestRecord r = records.get(0);
            assertThat(r.ok()).isTrue();
            assertThat(r.outputTokens()).isEqualTo(3);
            assertThat(r.ttftNanos()).isEqualTo(r.e2eNanos());
        }
    }

    @Test
    void errorStatus_isRecordedAsFailure() throws Exception {
        try (LoopbackOpenAiServer server = new LoopbackOpenAiServer(0, 0, 429);
                OpenLoopClient client = new OpenLoopClient(OpenLoopClient.Options.defaults())) {
            List<RequestRecord> records = client.run(server.baseUrl(), schedule(3, 1, 2), r -> {});

            assertThat(records).allSatisfy(r -> {
                assertThat(r.ok()).isFalse();
                assertThat(r.status()).isEqualTo(429);
                assertThat(r.error()).contains("429");
            });
        }
    }

    @Test
    void overallTimeout_abortsOutstandingAndMarksUnsent_withoutHanging() throws Exception {
        OpenLoopClient.Options options = new OpenLoopClient.Options(Duration.ofSeconds(30), Duration.ofMillis(400), 64);
        try (LoopbackOpenAiServer server = new LoopbackOpenAiServer(2_000, 0, 200);
                OpenLoopClient client = new OpenLoopClient(options)) {
            List<ScheduledRequest> requests = new ArrayList<>(schedule(2, 0, 2));
            requests.add(new ScheduledRequest(5_000 * MILLIS, ChatRequests.PATH, ChatRequests.userPrompt("late", 2), ""));
            long start = System.nanoTime();
            List<RequestRecord> records = client.run(server.baseUrl(), requests, r -> {});
            long tookMillis = (System.nanoTime() - start) / MILLIS;

            assertThat(tookMillis).isLessThan(1_900);
            assertThat(records).hasSize(3).noneSatisfy(r -> assertThat(r.ok()).isTrue());
            assertThat(records.get(0).error()).isNotNull();
            assertThat(records.get(2).sentNanos()).isEqualTo(-1);
            assertThat(records.get(2).error()).startsWith("not sent");
        }
    }

    @Test
    void unreachableServer_failsEveryRequestQuickly() throws Exception {
        try (OpenLoopClient client = new OpenLoopClient(OpenLoopClient.Options.defaults())) {
            List<RequestRecord> records = client.run("http://127.0.0.1:1", schedule(2, 0, 2), r -> {});

            assertThat(records).allSatisfy(r -> {
                assertThat(r.ok()).isFalse();
                assertThat(r.error()).startsWith("failed");
            });
        }
    }
}
