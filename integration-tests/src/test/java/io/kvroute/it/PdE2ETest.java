package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.mock.engine.TokenIds;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Prefill/decode disaggregation end to end: 2 prefill + 2 decode mock workers and the router. */
class PdE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> FAST = List.of("--decode-ms-per-step", "5", "--prefill-ms-per-1k", "5");
    private static PdFleet fleet;
    private static Http http;

    @BeforeAll
    static void start() throws Exception {
        fleet = PdFleet.start(2, 2, FAST, FAST, List.of());
        http = new Http();
    }

    @AfterAll
    static void stop() throws Exception {
        http.close();
        fleet.close();
    }

    private static String chat(String rid, boolean stream, int maxTokens) {
        return "{\"rid\":\"" + rid + "\",\"messages\":[{\"role\":\"user\",\"content\":\"tell me about prefill and decode\"}],"
                + "\"max_tokens\":" + maxTokens + ",\"stream\":" + stream
                + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    }

    private static JsonNode lastBody(MockWorkerMain.MockWorker worker, String rid) {
        List<JsonNode> bodies = worker.handler().recentBodies();
        for (int i = bodies.size() - 1; i >= 0; i--) {
            if (bodies.get(i).path("rid").asText().equals(rid)) {
                return bodies.get(i);
            }
        }
        return null;
    }

    private static JsonNode bodyAtAny(List<MockWorkerMain.MockWorker> workers, String rid) {
        for (MockWorkerMain.MockWorker worker : workers) {
            JsonNode body = lastBody(worker, rid);
            if (body != null) {
                return body;
            }
        }
        return null;
    }

    private static String expectedText(String rid, int tokens) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < tokens; i++) {
            text.append(io.kvroute.mock.http.MockWorkerHandlerTestAccess.tokenText(TokenIds.output(rid, i)));
        }
        return text.toString();
    }

    @Test
    void nonStreamingChat_goesThroughThePair_withIdenticalBootstrapAtBothSides() throws Exception {
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), chat("pd-plain", false, 6));
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        assertThat(response.getHeaders().get("x-kvroute-decode-url")).isNotBlank();
        JsonNode body = JSON.readTree(response.getContentAsString());
        assertThat(body.path("choices").get(0).path("message").path("content").asText()).isEqualTo(expectedText("pd-plain", 6));
        assertThat(body.path("usage").path("completion_tokens").asInt()).isEqualTo(6);
        JsonNode atPrefill = bodyAtAny(fleet.prefills, "pd-plain");
        JsonNode atDecode = bodyAtAny(fleet.decodes, "pd-plain");
        assertThat(atPrefill).isNotNull();
        assertThat(atDecode).isNotNull();
        for (String field : List.of("bootstrap_host", "bootstrap_port", "bootstrap_room")) {
            assertThat(atDecode.get(field)).as(field).isEqualTo(atPrefill.get(field));
        }
        assertThat(atPrefill.path("bootstrap_room").asLong()).isNotNegative();
        assertThat(atPrefill.path("bootstrap_port").asInt()).isPositive();
    }

    @Test
    void streamingChat_relaysTheDecodeStream() throws Exception {
        Http.Reply reply = http.stream(fleet.url("/v1/chat/completions"), chat("pd-stream", true, 12)).get(30, TimeUnit.SECONDS);
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get("x-kvroute-decode-url")).isNotBlank();
        assertThat(reply.body()).endsWith("data: [DONE]\n\n");
        assertThat(SseText.content(reply.body())).isEqualTo(expectedText("pd-stream", 12));
        assertThat(SseText.usage(reply.body()).path("completion_tokens").asInt()).isEqualTo(12);
    }

    @Test
    void prefill_isChosenCacheAware_forRepeatedPrefixes() throws Exception {
        // Two long shared prefixes (tenants); every repeat of a tenant must reach the prefill worker that
        // already holds its prefix (cache_aware is the default PD prefill policy).
        java.util.Map<Integer, java.util.Set<String>> prefillByTenant = new java.util.HashMap<>();
        for (int i = 0; i < 8; i++) {
            int tenant = i % 2;
            String system = ("tenant " + tenant + " shared instructions. ").repeat(400);
            String body = "{\"messages\":[{\"role\":\"system\",\"content\":\"" + system + "\"},"
                    + "{\"role\":\"user\",\"content\":\"question " + i + "\"}],\"max_tokens\":2}";
            ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), body);
            assertThat(response.getStatus()).isEqualTo(200);
            prefillByTenant.computeIfAbsent(tenant, t -> new java.util.HashSet<>()).add(response.getHeaders().get("x-kvroute-worker"));
        }
        assertThat(prefillByTenant.get(0)).hasSize(1);
        assertThat(prefillByTenant.get(1)).hasSize(1);
        assertThat(http.get(fleet.url("/metrics")).getContentAsString())
                .contains("kvroute_cache_aware_decisions_total{decision=\"cache_hit\"");
    }

    @Test
    void batchedRequest_getsBootstrapArraysOfLengthN() throws Exception {
        String body = "{\"rid\":\"pd-n2\",\"n\":2,\"messages\":[{\"role\":\"user\",\"content\":\"two please\"}],\"max_tokens\":3}";
        assertThat(http.postJson(fleet.url("/v1/chat/completions"), body).getStatus()).isEqualTo(200);
        JsonNode atPrefill = bodyAtAny(fleet.prefills, "pd-n2");
        JsonNode atDecode = bodyAtAny(fleet.decodes, "pd-n2");
        for (String field : List.of("bootstrap_host", "bootstrap_port", "bootstrap_room")) {
            assertThat(atPrefill.get(field).isArray()).as(field).isTrue();
            assertThat(atPrefill.get(field).size()).as(field).isEqualTo(2);
            assertThat(atDecode.get(field)).isEqualTo(atPrefill.get(field));
        }
        assertThat(atPrefill.get("bootstrap_room").get(0)).isNotEqualTo(atPrefill.get("bootstrap_room").get(1));
    }

    @Test
    void decode_isChosenByLoad() throws Exception {
        // Its own fleet: requests of other tests would otherwise still count as the router's unreported dispatches.
        try (PdFleet fleet = PdFleet.start(1, 2, FAST, FAST, List.of())) {
            decodeIsChosenByLoad(fleet);
        }
    }

    private static void decodeIsChosenByLoad(PdFleet fleet) throws Exception {
        // One long stream occupies a decode worker; a request sent meanwhile must go to the other.
        CompletableFuture<Http.Reply> longStream = http.stream(fleet.url("/v1/chat/completions"), chat("pd-long", true, 200));
        await().atMost(Duration.ofSeconds(10)).until(() -> bodyAtAny(fleet.decodes, "pd-long") != null);
        String busyDecode = fleet.decodes.stream().filter(d -> lastBody(d, "pd-long") != null).findFirst().orElseThrow().baseUrl();
        // wait until the busy decode's own load report shows the request (the decode pressure signal)
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            for (JsonNode w : JSON.readTree(http.get(fleet.url("/v1/loads")).getContentAsString()).path("workers")) {
                if (w.path("url").asText().equals(busyDecode) && w.path("fresh").asBoolean()
                        && w.path("num_running_reqs").asInt() + w.path("num_waiting_reqs").asInt() >= 1) {
                    return true;
                }
            }
            return false;
        });
        // Both decode workers report fresh and nothing waits: decode pressure falls to running requests.
        // (Later requests would also count the router's own unreported dispatches as waiting work.)
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), chat("pd-other", false, 2));
        assertThat(response.getHeaders().get("x-kvroute-decode-url"))
                .as("loads: %s", http.get(fleet.url("/v1/loads")).getContentAsString()).isNotEqualTo(busyDecode);
        assertThat(longStream.get(60, TimeUnit.SECONDS).status()).isEqualTo(200);
    }

    @Test
    void continuation_acrossThreeSegments_isSeamless_andGetsPriorityAtPrefill() throws Exception {
        try (PdFleet segmented = PdFleet.start(1, 1, FAST, List.of("--decode-ms-per-step", "5", "--decode-segment-tokens", "10"),
                List.of())) {
            long priorityBefore = priorityAdmitted(segmented.prefills.get(0));
            Http.Reply reply = http.stream(segmented.url("/v1/chat/completions"), chat("pd-cont", true, 30)).get(60, TimeUnit.SECONDS);
            assertThat(reply.status()).isEqualTo(200);
            assertThat(SseText.content(reply.body())).isEqualTo(expectedText("pd-cont", 30));
            assertThat(SseText.usage(reply.body()).path("completion_tokens").asInt()).isEqualTo(30);
            assertThat(reply.body()).doesNotContain("kvroute_capacity_marker");
            assertThat(reply.body().split("data: \\[DONE]", -1)).hasSize(2);
            // segments 1 and 2 reached the prefill engine with inference priority
            assertThat(priorityAdmitted(segmented.prefills.get(0)) - priorityBefore).isEqualTo(2);
            JsonNode lastAtPrefill = lastBody(segmented.prefills.get(0), "pd-cont");
            assertThat(lastAtPrefill.path("segment_index").asInt()).isEqualTo(2);
            assertThat(lastAtPrefill.path("high_priority_request").asBoolean()).isTrue();

            ContentResponse whole = http.postJson(segmented.url("/v1/chat/completions"), chat("pd-cont-whole", false, 25));
            JsonNode body = JSON.readTree(whole.getContentAsString());
            assertThat(body.path("choices").get(0).path("message").path("content").asText()).isEqualTo(expectedText("pd-cont-whole", 25));
            assertThat(body.path("usage").path("completion_tokens").asInt()).isEqualTo(25);
            assertThat(http.get(segmented.url("/metrics")).getContentAsString()).contains("kvroute_pd_continuations_total");
        }
    }

    private static long priorityAdmitted(MockWorkerMain.MockWorker worker) throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> counters = (Map<String, Object>) worker.engine().schedulerView().get("counters");
        return ((Number) counters.get("inference_priority_admitted")).longValue();
    }

    @Test
    void prefill4xx_isRelayedVerbatim() throws Exception {
        try (PdFleet own = PdFleet.start(1, 1, FAST, FAST, List.of())) {
            own.prefills.get(0).handler().injectFailures(422, 1);
            ContentResponse response = http.postJson(own.url("/v1/chat/completions"), chat("pd-422", false, 3));
            assertThat(response.getStatus()).isEqualTo(422);
            assertThat(response.getContentAsString()).contains("injected failure 422");
        }
    }

    @Test
    void clientDisconnect_letsPrefillFinishAndAbortsDecode() throws Exception {
        try (PdFleet own = PdFleet.start(1, 1, List.of("--prefill-ms-per-1k", "3000", "--decode-ms-per-step", "20"),
                List.of("--decode-ms-per-step", "20"), List.of())) {
            String prompt = "word ".repeat(600);
            String body = "{\"rid\":\"pd-gone\",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}],"
                    + "\"max_tokens\":300,\"stream\":true}";
            org.eclipse.jetty.client.Request request = http.client.newRequest(own.url("/v1/chat/completions"))
                    .method("POST").body(new org.eclipse.jetty.client.StringRequestContent("application/json", body));
            request.send(result -> { });
            await().atMost(Duration.ofSeconds(10)).until(() -> lastBody(own.prefills.get(0), "pd-gone") != null);
            request.abort(new Exception("client went away"));
            // the prefill still runs to completion...
            await().atMost(Duration.ofSeconds(20)).until(() -> own.prefills.get(0).handler().outputFor("pd-gone") != null);
            assertThat(own.prefills.get(0).handler().abortedRequests()).isZero();
            // ...while the decode side is aborted and stops generating
            await().atMost(Duration.ofSeconds(20)).until(() -> own.decodes.get(0).handler().abortedRequests() >= 1
                    || (own.decodes.get(0).handler().outputFor("pd-gone") != null
                            && own.decodes.get(0).handler().outputFor("pd-gone").length() < expectedText("pd-gone", 300).length()));
            await().atMost(Duration.ofSeconds(10)).until(() -> own.router.router().activeRequests() == 0);
        }
    }

    @Test
    void decodeFailureMidStream_endsWithAnErrorEvent() throws Exception {
        try (PdFleet own = PdFleet.start(1, 1, FAST, List.of("--decode-ms-per-step", "30"), List.of())) {
            CompletableFuture<Http.Reply> reply = http.stream(own.url("/v1/chat/completions"), chat("pd-crash", true, 300));
            // wait until the decode engine is generating this request, then kill the worker mid-stream
            await().atMost(Duration.ofSeconds(10)).until(() -> lastBody(own.decodes.get(0), "pd-crash") != null
                    && own.decodes.get(0).engine().stats().numRunningReqs() > 0);
            own.decodes.get(0).close();
            Http.Reply done = reply.get(20, TimeUnit.SECONDS);
            assertThat(done.body()).contains("\"error\"");
        }
    }

    @Test
    void busy_withRetryOff_reachesTheClientAs429() throws Exception {
        try (PdFleet own = PdFleet.start(1, 1, FAST, FAST, List.of())) {
            own.decodes.get(0).handler().injectFailures(429, 1);
            ContentResponse response = http.postJson(own.url("/v1/chat/completions"), chat("pd-busy-off", false, 3));
            assertThat(response.getStatus()).isEqualTo(429);
            assertThat(response.getHeaders().get("retry-after")).isNotBlank();
            assertThat(response.getContentAsString()).contains("server_busy");
        }
    }

    @Test
    void busy_withRetryOn_succeedsOnceTheNodeFreesUp_andFailsPastTheWindow() throws Exception {
        try (PdFleet own = PdFleet.start(1, 1, FAST, FAST, List.of("--pd-busy-retry-timeout-secs", "5"))) {
            own.decodes.get(0).handler().injectFailures(429, 3);
            ContentResponse ok = http.postJson(own.url("/v1/chat/completions"), chat("pd-busy-on", false, 3));
            assertThat(ok.getStatus()).as(ok.getContentAsString()).isEqualTo(200);
            assertThat(http.get(own.url("/metrics")).getContentAsString()).contains("cause=\"busy\"");
        }
        try (PdFleet own = PdFleet.start(1, 1, FAST, FAST, List.of("--pd-busy-retry-timeout-secs", "0.5"))) {
            own.prefills.get(0).handler().injectFailures(429, 100_000);
            long start = System.nanoTime();
            ContentResponse busy = http.postJson(own.url("/v1/chat/completions"), chat("pd-busy-window", false, 3));
            assertThat(busy.getStatus()).isEqualTo(429);
            assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(400);
        }
    }

    @Test
    void busyAfterOutput_isNeverReplayed() throws Exception {
        try (PdFleet own = PdFleet.start(1, 1, FAST, List.of("--decode-ms-per-step", "60", "--decode-segment-tokens", "5"),
                List.of())) {
            // The first segment streams 5 tokens (300 ms); busy is injected while it runs, so the
            // continuation's decode call, and only it, is answered 429.
            CompletableFuture<Http.Reply> reply = http.stream(own.url("/v1/chat/completions"), chat("pd-busy-late", true, 15));
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .until(() -> lastBody(own.decodes.get(0), "pd-busy-late") != null);
            own.decodes.get(0).handler().injectFailures(429, 100);
            Http.Reply done = reply.get(30, TimeUnit.SECONDS);
            assertThat(done.status()).isEqualTo(200);
            assertThat(SseText.content(done.body())).as("the first segment, never replayed nor extended").isEqualTo(expectedText("pd-busy-late", 5));
            assertThat(done.body()).contains("server_busy");
        }
    }
}
