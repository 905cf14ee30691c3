package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.tenant.TenantDirectory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tenants end to end over real HTTP with mock GPU workers: identity from API keys, rate limits, the
 * router-side queue (a wait that is served, a wait that times out), and preemption only before the
 * first byte.
 *
 * <p>Capacity is set so one request fills the router: {@code --qos-worker-capacity-tokens 300} and
 * every request costs its estimated input plus {@code max_tokens 200}.
 */
class TenantsE2ETest {

    static final String TENANTS = "tenants:\n"
            + "  - {name: chat, api_key_sha256: " + TenantDirectory.sha256Hex("sk-chat") + ", max_class: interactive}\n"
            + "  - {name: bulk, api_key_sha256: " + TenantDirectory.sha256Hex("sk-bulk") + ", max_class: batch}\n"
            + "  - {name: limited, api_key_sha256: " + TenantDirectory.sha256Hex("sk-limited") + ", requests_per_minute: 2}\n"
            + "classes:\n"
            + "  default: {queue_timeout_ms: 400}\n";

    @TempDir
    Path dir;

    private List<String> routerArgs() throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(file, TENANTS);
        return List.of("--policy", "round_robin", "--tenants-file", file.toString(), "--qos-worker-capacity-tokens", "300");
    }

    private static String chat(boolean stream, int maxTokens) {
        return "{\"model\":\"mock-model\",\"stream\":" + stream + ",\"max_tokens\":" + maxTokens
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
    }

    private static ContentResponse post(Http http, String url, String key, String priority, String body) throws Exception {
        var request = http.client.newRequest(url).method(HttpMethod.POST).timeout(30, TimeUnit.SECONDS)
                .body(new StringRequestContent("application/json", body));
        if (key != null) {
            request.headers(h -> h.put("Authorization", "Bearer " + key));
        }
        if (priority != null) {
            request.headers(h -> h.put("x-kvroute-priority", priority));
        }
        return request.send();
    }

    private static CompletableFuture<ContentResponse> postAsync(Http http, String url, String key, String priority, String body) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return post(http, url, key, priority, body);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void apiKeysIdentifyTenants_unknownKeysAre401_andRateLimitsAre429WithRetryAfter() throws Exception {
        try (TestFleet fleet = TestFleet.start(1, List.of(), routerArgs()); Http http = new Http()) {
            String url = fleet.url("/v1/chat/completions");
            ContentResponse none = post(http, url, null, null, chat(false, 4));
            assertThat(none.getStatus()).isEqualTo(401);
            assertThat(none.getHeaders().get("WWW-Authenticate")).isEqualTo("Bearer");
            assertThat(none.getContentAsString()).contains("authentication_error");
            assertThat(post(http, url, "sk-wrong", null, chat(false, 4)).getStatus()).isEqualTo(401);
            assertThat(post(http, url, "sk-chat", null, chat(false, 4)).getStatus()).isEqualTo(200);

            assertThat(post(http, url, "sk-limited", null, chat(false, 4)).getStatus()).isEqualTo(200);
            assertThat(post(http, url, "sk-limited", null, chat(false, 4)).getStatus()).isEqualTo(200);
            ContentResponse limited = post(http, url, "sk-limited", null, chat(false, 4));
            assertThat(limited.getStatus()).isEqualTo(429);
            assertThat(Long.parseLong(limited.getHeaders().get("Retry-After"))).isBetween(1L, 61L);
            assertThat(limited.getHeaders().get("x-kvroute-reason")).isEqualTo("rate_limit_requests");
            assertThat(limited.getContentAsString()).contains("\"code\":429").contains("limited");

            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            assertThat(scrape).contains("kvroute_qos_shed_total{class=\"default\",reason=\"rate_limit_requests\",tenant=\"limited\"}");
        }
    }

    /**
     * Tokens per minute count weighted tokens: a prompt the chosen worker already holds (cache-aware routing's prefix
     * tree) settles its cached input at a tenth. Each request reserves about 2,030 tokens at full weight (its ~8,100
     * byte body / 4, plus 4 output); the first settles to about the same, the second (cached) to a few hundred, so a
     * third fits under 5,000. Counted as plain input + output it would need about 6,100 and get 429. The same prompt
     * with a budget of 1,000 output tokens reserves about 3,030 again, at full weight, and no longer fits.
     */
    @Test
    void tokensPerMinute_countACachedPromptAtATenth_soTheSamePromptAgainStillFits() throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(file, "tenants:\n  - {name: metered, api_key_sha256: " + TenantDirectory.sha256Hex("sk-metered")
                + ", tokens_per_minute: 5000}\n");
        StringBuilder prompt = new StringBuilder();
        for (int i = 0; prompt.length() < 8_000; i++) {
            prompt.append("paragraph ").append(i).append(" of a long shared system prompt. ");
        }
        String body = "{\"model\":\"mock-model\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\""
                + prompt + "\"}]}";
        try (TestFleet fleet = TestFleet.start(2, List.of(), List.of("--policy", "cache_aware", "--tenants-file",
                file.toString())); Http http = new Http()) {
            String url = fleet.url("/v1/chat/completions");
            for (int i = 0; i < 3; i++) {
                ContentResponse r = post(http, url, "sk-metered", null, body);
                assertThat(r.getStatus()).as("request " + i + ": " + r.getHeaders().get("x-kvroute-reason")).isEqualTo(200);
            }
            // the reservation is still at full weight (nothing known cached at admission): ~3,030 on ~2,500 counted
            ContentResponse larger = post(http, url, "sk-metered", null, body.replace("\"max_tokens\":4", "\"max_tokens\":1000"));
            assertThat(larger.getStatus()).as("the limit still holds").isEqualTo(429);
            assertThat(larger.getHeaders().get("x-kvroute-reason")).isEqualTo("rate_limit_tokens");
        }
    }

    @Test
    void aTrustedTenantHeader_isHonouredOnlyBehindItsFlag() throws Exception {
        List<String> args = new java.util.ArrayList<>(routerArgs());
        try (TestFleet plain = TestFleet.start(1, List.of(), args); Http http = new Http()) {
            var request = http.client.newRequest(plain.url("/v1/chat/completions")).method(HttpMethod.POST)
                    .headers(h -> h.put("x-tenant", "chat")).body(new StringRequestContent("application/json", chat(false, 4)));
            assertThat(request.send().getStatus()).as("without the flag the header is no identity").isEqualTo(401);
        }
        args.addAll(List.of("--trusted-tenant-header", "x-tenant"));
        try (TestFleet trusted = TestFleet.start(1, List.of(), args); Http http = new Http()) {
            String url = trusted.url("/v1/chat/completions");
            var named = http.client.newRequest(url).method(HttpMethod.POST)
                    .headers(h -> h.put("x-tenant", "team-a")).body(new StringRequestContent("application/json", chat(false, 4)));
            assertThat(named.send().getStatus()).isEqualTo(200);
            var bad = http.client.newRequest(url).method(HttpMethod.POST)
                    .headers(h -> h.put("x-tenant", "no spaces/allowed")).body(new StringRequestContent("application/json", chat(false, 4)));
            ContentResponse refused = bad.send();
            assertThat(refused.getStatus()).isEqualTo(400);
            assertThat(refused.getContentAsString()).contains("x-tenant");
            assertThat(post(http, url, "sk-chat", null, chat(false, 4)).getStatus()).as("keys still work").isEqualTo(200);
        }
    }

    @Test
    void whenTheRouterIsFull_aRequestWaitsAndIsServed_orTimesOutWith429AndRetryAfter() throws Exception {
        try (TestFleet fleet = TestFleet.start(1, List.of("--decode-ms-per-step", "10"), routerArgs());
                Http http = new Http()) {
            String url = fleet.url("/v1/chat/completions");
            CompletableFuture<ContentResponse> slow = postAsync(http, url, "sk-bulk", "batch", chat(false, 200));
            // the slow request holds the router's capacity once the worker has it
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> fleet.workers.get(0).handler().requests() == 1);
            ContentResponse timedOut = post(http, url, "sk-chat", null, chat(false, 200)); // default: 400 ms timeout
            assertThat(timedOut.getStatus()).isEqualTo(429);
            assertThat(timedOut.getHeaders().get("x-kvroute-reason")).isEqualTo("queue_timeout");
            assertThat(timedOut.getHeaders().get("Retry-After")).isNotNull();
            CompletableFuture<ContentResponse> waits = postAsync(http, url, "sk-bulk", "batch", chat(false, 200));
            assertThat(slow.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
            assertThat(waits.get(30, TimeUnit.SECONDS).getStatus()).as("a batch wait is long enough").isEqualTo(200);
            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            assertThat(scrape).contains("kvroute_qos_shed_total{class=\"default\",reason=\"queue_timeout\",tenant=\"chat\"} 1.0");
        }
    }

    @Test
    void aHigherClass_preemptsABatchRequestThatHasSentNothing_andItsUpstreamIsAborted() throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(file, TENANTS);
        try (HoldingRawWorker worker = new HoldingRawWorker();
                RouterMain.RunningRouter router = RouterMain.start("--host", "127.0.0.1", "--port", "0",
                        "--policy", "round_robin", "--model-ids", "m", "--worker-urls", worker.baseUrl(),
                        "--retry-max-attempts", "1", "--request-timeout-secs", "3", "--tenants-file", file.toString(),
                        "--qos-worker-capacity-tokens", "300");
                Http http = new Http()) {
            String url = router.baseUrl() + "/v1/chat/completions";
            String body = chat(false, 200).replace("mock-model", "m");
            CompletableFuture<ContentResponse> victim = postAsync(http, url, "sk-bulk", "batch", body);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> worker.generations.get() == 1);
            CompletableFuture<ContentResponse> high = postAsync(http, url, "sk-chat", "interactive", body);
            ContentResponse preempted = victim.get(10, TimeUnit.SECONDS);
            assertThat(preempted.getStatus()).isEqualTo(503);
            assertThat(preempted.getHeaders().get("x-kvroute-reason")).isEqualTo("preempted");
            assertThat(preempted.getHeaders().get("Retry-After")).isNotNull();
            assertThat(preempted.getContentAsString()).contains("preempted");
            assertThat(worker.generationAborted.await(10, TimeUnit.SECONDS)).as("the victim's upstream request was aborted").isTrue();
            assertThat(high.get(10, TimeUnit.SECONDS).getStatus()).as("the holding worker never answers: a timeout, not a 503")
                    .isEqualTo(504);
            assertThat(worker.generations.get()).isEqualTo(2);
            String scrape = http.get(router.baseUrl() + "/metrics").getContentAsString();
            assertThat(scrape).as("counted by the class that took its place").contains(
                    "kvroute_qos_preempted_total{class=\"batch\",reason=\"by_interactive\",tenant=\"bulk\"} 1.0");
        }
    }

    /**
     * The queue depth is per tenant and class: while a slow batch request holds the router's capacity, two more of
     * {@code bulk}'s and one of {@code chat}'s wait in {@code batch} (with {@code --qos-max-tenant-labels 1} the
     * second tenant seen is {@code other}), and the gauges read 2 and 1 until they are served, then 0.
     */
    @Test
    void queueDepth_isExportedPerTenantAndClass_boundedByTheLabelLimit() throws Exception {
        List<String> args = new java.util.ArrayList<>(routerArgs());
        args.addAll(List.of("--qos-max-tenant-labels", "1"));
        try (TestFleet fleet = TestFleet.start(1, List.of("--decode-ms-per-step", "10"), args); Http http = new Http()) {
            String url = fleet.url("/v1/chat/completions");
            CompletableFuture<ContentResponse> slow = postAsync(http, url, "sk-bulk", "batch", chat(false, 200));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> fleet.workers.get(0).handler().requests() == 1);
            List<CompletableFuture<ContentResponse>> waiting = List.of(
                    postAsync(http, url, "sk-bulk", "batch", chat(false, 4)),
                    postAsync(http, url, "sk-bulk", "batch", chat(false, 4)),
                    postAsync(http, url, "sk-chat", "batch", chat(false, 4)));
            String bulk = "kvroute_qos_queue_depth{class=\"batch\",tenant=\"bulk\"} ";
            String other = "kvroute_qos_queue_depth{class=\"batch\",tenant=\"other\"} ";
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(http.get(fleet.url("/metrics")).getContentAsString()).contains(bulk + "2.0", other + "1.0"));
            assertThat(slow.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
            for (CompletableFuture<ContentResponse> w : waiting) {
                assertThat(w.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
            }
            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            assertThat(scrape).contains(bulk + "0.0", other + "0.0").doesNotContain("tenant=\"chat\"");
        }
    }

    /**
     * PD: the victim is a batch request whose prefill and decode calls both reached their (holding) workers and
     * sent nothing. An interactive request takes its place: the victim's client gets 503 {@code preempted}, and
     * both of its upstream calls are aborted (each worker sees its connection close). The request timeout is long,
     * so no abort in the test's window can be the router giving up on a call.
     */
    @Test
    void aHigherClass_preemptsAPdRequestThatHasSentNothing_andBothLegsAreAborted() throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(file, TENANTS);
        try (HoldingRawWorker prefill = new HoldingRawWorker("{\"model_id\":\"m\",\"bootstrap_port\":8998}");
                HoldingRawWorker decode = new HoldingRawWorker();
                RouterMain.RunningRouter router = RouterMain.start("--host", "127.0.0.1", "--port", "0",
                        "--policy", "round_robin", "--model-ids", "m", "--prefill-urls", prefill.baseUrl(),
                        "--decode-urls", decode.baseUrl(), "--health-check-interval-secs", "0.2",
                        "--retry-max-attempts", "1", "--request-timeout-secs", "60", "--tenants-file", file.toString(),
                        "--qos-worker-capacity-tokens", "300");
                Http http = new Http()) {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> router.router().workers()
                    .fleet().all().stream().filter(w -> w.role() == io.kvroute.router.worker.WorkerRole.PREFILL)
                    .allMatch(w -> w.bootstrapPort() != null));
            String url = router.baseUrl() + "/v1/chat/completions";
            String body = chat(false, 200).replace("mock-model", "m");
            CompletableFuture<ContentResponse> victim = postAsync(http, url, "sk-bulk", "batch", body);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> prefill.generations.get() == 1 && decode.generations.get() == 1);
            CompletableFuture<ContentResponse> high = postAsync(http, url, "sk-chat", "interactive", body);
            ContentResponse preempted = victim.get(10, TimeUnit.SECONDS);
            assertThat(preempted.getStatus()).isEqualTo(503);
            assertThat(preempted.getHeaders().get("x-kvroute-reason")).isEqualTo("preempted");
            assertThat(Long.parseLong(preempted.getHeaders().get("Retry-After"))).isPositive();
            assertThat(preempted.getContentAsString()).contains("preempted");
            assertThat(prefill.generationAborted.await(10, TimeUnit.SECONDS)).as("the victim's prefill call was aborted").isTrue();
            assertThat(decode.generationAborted.await(10, TimeUnit.SECONDS)).as("the victim's decode call was aborted").isTrue();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> prefill.generations.get() == 2 && decode.generations.get() == 2);
            assertThat(high).as("the interactive request was admitted and is held by the workers").isNotDone();
            String scrape = http.get(router.baseUrl() + "/metrics").getContentAsString();
            assertThat(scrape).contains(
                    "kvroute_qos_preempted_total{class=\"batch\",reason=\"by_interactive\",tenant=\"bulk\"} 1.0");
        }
    }

    @Test
    void aStreamThatHasSentBytes_isNeverCut_theHigherClassWaitsForIt() throws Exception {
        try (TestFleet fleet = TestFleet.start(1, List.of("--decode-ms-per-step", "10"), routerArgs());
                Http http = new Http()) {
            String url = fleet.url("/v1/chat/completions");
            var stream = http.client.newRequest(url).method(HttpMethod.POST).timeout(30, TimeUnit.SECONDS)
                    .headers(h -> h.put("Authorization", "Bearer sk-bulk").put("x-kvroute-priority", "batch"))
                    .body(new StringRequestContent("application/json", chat(true, 150)));
            CompletableFuture<String> streamed = new CompletableFuture<>();
            CompletableFuture<Void> firstChunk = new CompletableFuture<>();
            StringBuilder text = new StringBuilder();
            int[] status = new int[1];
            stream.onResponseContent((r, buffer) -> {
                synchronized (text) {
                    text.append(StandardCharsets.UTF_8.decode(buffer.duplicate()));
                }
                firstChunk.complete(null);
            }).send(result -> {
                status[0] = result.getResponse().getStatus();
                streamed.complete(text.toString());
            });
            firstChunk.get(10, TimeUnit.SECONDS);
            ContentResponse high = post(http, url, "sk-chat", "interactive", chat(false, 200));
            assertThat(streamed.get(30, TimeUnit.SECONDS)).contains("[DONE]").doesNotContain("\"error\"");
            assertThat(status[0]).isEqualTo(200);
            assertThat(high.getStatus()).as("it waited for the stream instead of cutting it").isEqualTo(200);
            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            assertThat(scrape.lines().filter(l -> l.startsWith("kvroute_qos_preempted_total{"))
                    .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum())
                    .as("preemptions").isZero();
        }
    }
}
