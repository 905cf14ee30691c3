package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;

/**
 * One router over two SGLang-style and two vLLM-style mock workers ({@code --engine-api vllm}: no
 * {@code /server_info}, load only from {@code /metrics}). The router types each worker from its HTTP
 * surface, takes vLLM load from the scrape and SGLang load from LoadStat, keeps repeated prompts on
 * their holder on both kinds, never sends router {@code input_ids} to a vLLM worker, and the queue
 * gate diverts a vLLM holder's prompt once its scraped {@code vllm:num_requests_waiting} is over the limit,
 * and a vLLM worker whose scrapes fail counts as saturated once its reading is stale.
 */
class MixedFleetE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static String chat(String text, int maxTokens) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":" + maxTokens + "}";
    }

    private static Map<String, JsonNode> loadsByUrl(Http http, RouterMain.RunningRouter router) throws Exception {
        Map<String, JsonNode> out = new HashMap<>();
        for (JsonNode w : JSON.readTree(http.get(router.baseUrl() + "/v1/loads").getContentAsString()).path("workers")) {
            out.put(w.path("url").asText(), w);
        }
        return out;
    }

    private static double blockEvents(Http http, RouterMain.RunningRouter router) throws Exception {
        return MetricSum.of(http.get(router.baseUrl() + "/metrics").getContentAsString(), "kvroute_kv_events_block_events_total");
    }

    @Test
    void mixedFleet_typesLoadsAndRoutesBothKinds() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<String> fast = List.of("--port", "0", "--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1");
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        try (Http http = new Http()) {
            workers.add(MockWorkerMain.start(fast.toArray(String[]::new)));
            workers.add(MockWorkerMain.start(fast.toArray(String[]::new)));
            List<String> vllm = new ArrayList<>(fast);
            vllm.addAll(List.of("--engine-api", "vllm", "--running-max-req-size", "1"));
            workers.add(MockWorkerMain.start(vllm.toArray(String[]::new)));
            workers.add(MockWorkerMain.start(vllm.toArray(String[]::new)));
            List<String> sglangUrls = List.of(workers.get(0).baseUrl(), workers.get(1).baseUrl());
            List<String> vllmUrls = List.of(workers.get(2).baseUrl(), workers.get(3).baseUrl());
            List<String> urls = new ArrayList<>(sglangUrls);
            urls.addAll(vllmUrls);
            try (RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--worker-urls", String.join(",", urls),
                    "--policy", "cache_aware", "--tokenizer-path", tokenizer, "--cache-index", "auto",
                    "--cache-affinity-min-matched-tokens", "32", "--worker-queue-limit", "2", "--load-source", "auto",
                    "--health-check-interval-secs", "0.2")) {
                // each kind's load arrives through its own source
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    Map<String, JsonNode> loads = loadsByUrl(http, router);
                    return urls.stream().allMatch(u -> loads.containsKey(u) && loads.get(u).path("fresh").asBoolean());
                });
                Map<String, JsonNode> loads = loadsByUrl(http, router);
                for (String u : sglangUrls) {
                    assertThat(loads.get(u).path("load_source").asText()).as(u).isEqualTo("loadstat");
                }
                for (String u : vllmUrls) {
                    assertThat(loads.get(u).path("load_source").asText()).as(u).isEqualTo("metrics");
                }

                // repeated prompts stay on their holder; go on until both kinds hold some
                // no shared preamble: a shared prefix would make its first holder the owner of every later prompt
                Map<String, String> holderByText = new HashMap<>();
                String vllmHeld = null;
                boolean sglangHeld = false;
                for (int i = 0; i < 60 && (vllmHeld == null || !sglangHeld); i++) {
                    String text = ("Prompt " + i + " asks about one worker's cache and nothing else. ").repeat(8);
                    double storedBefore = blockEvents(http, router);
                    ContentResponse first = http.postJson(router.baseUrl() + "/v1/chat/completions", chat(text, 2));
                    assertThat(first.getStatus()).isEqualTo(200);
                    String holder = first.getHeaders().get("x-kvroute-worker");
                    if (sglangUrls.contains(holder)) {
                        // the exact index answers for SGLang workers once their KV events arrived
                        await().atMost(Duration.ofSeconds(20)).until(() -> blockEvents(http, router) > storedBefore);
                    }
                    // a report newer than the first request: the holder is idle again, not queued by it
                    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
                        JsonNode load = loadsByUrl(http, router).get(holder);
                        return load.path("fresh").asBoolean() && load.path("num_waiting_reqs").asInt() == 0
                                && load.path("router_dispatches_since_report").asInt() == 0;
                    });
                    ContentResponse again = http.postJson(router.baseUrl() + "/v1/chat/completions", chat(text, 2));
                    assertThat(again.getHeaders().get("x-kvroute-worker")).as("prompt %d held by %s, loads %s", i,
                            vllmUrls.contains(holder) ? "vllm" : "sglang", loadsByUrl(http, router)).isEqualTo(holder);
                    holderByText.put(text, holder);
                    if (vllmUrls.contains(holder)) {
                        vllmHeld = vllmHeld == null ? text : vllmHeld;
                    } else {
                        sglangHeld = true;
                    }
                }
                assertThat(vllmHeld).as("a prompt held by a vLLM worker").isNotNull();
                assertThat(sglangHeld).as("a prompt held by an SGLang worker").isTrue();

                // no router input_ids ever reached a vLLM worker; the SGLang workers got them
                for (int w = 2; w < 4; w++) {
                    assertThat(workers.get(w).handler().recentBodies()).allSatisfy(b -> assertThat(b.has("input_ids")).isFalse());
                }
                long sglangWithIds = workers.subList(0, 2).stream().flatMap(w -> w.handler().recentBodies().stream())
                        .filter(b -> b.has("input_ids")).count();
                assertThat(sglangWithIds).isPositive();

                // the vLLM holder queues (one request slot, long answers sent to it directly): the gate diverts
                String holder = holderByText.get(vllmHeld);
                MockWorkerMain.MockWorker busy = workers.get(2).baseUrl().equals(holder) ? workers.get(2) : workers.get(3);
                List<CompletableFuture<Http.Reply>> flood = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    flood.add(http.stream(busy.baseUrl() + "/v1/chat/completions",
                            "{\"messages\":[{\"role\":\"user\",\"content\":\"flood " + i + "\"}],\"max_tokens\":400,\"stream\":true}"));
                }
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                        .until(() -> loadsByUrl(http, router).get(holder).path("num_waiting_reqs").asInt() > 2);
                double rejectedBefore = MetricSum.of(http.get(router.baseUrl() + "/metrics").getContentAsString(),
                        "kvroute_cache_gate_rejections_total");
                ContentResponse diverted = http.postJson(router.baseUrl() + "/v1/chat/completions", chat(vllmHeld, 2));
                assertThat(diverted.getStatus()).isEqualTo(200);
                assertThat(diverted.getHeaders().get("x-kvroute-worker")).isNotEqualTo(holder);
                assertThat(MetricSum.of(http.get(router.baseUrl() + "/metrics").getContentAsString(),
                        "kvroute_cache_gate_rejections_total")).isGreaterThan(rejectedBefore);
                for (CompletableFuture<Http.Reply> reply : flood) {
                    assertThat(reply.get(60, TimeUnit.SECONDS).status()).isEqualTo(200);
                }

                // the other vLLM worker's scrapes start failing: its last reading goes stale and counts as saturated
                MockWorkerMain.MockWorker quiet = busy == workers.get(2) ? workers.get(3) : workers.get(2);
                assertThat(loadsByUrl(http, router).get(quiet.baseUrl()).path("stale_saturated").asBoolean()).isFalse();
                quiet.vllmApi().failMetrics(true);
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                        .until(() -> loadsByUrl(http, router).get(quiet.baseUrl()).path("stale_saturated").asBoolean());
                assertThat(loadsByUrl(http, router).get(quiet.baseUrl()).path("fresh").asBoolean()).isFalse();
                quiet.vllmApi().failMetrics(false);
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                        .until(() -> !loadsByUrl(http, router).get(quiet.baseUrl()).path("stale_saturated").asBoolean());
            }
        } finally {
            workers.forEach(MockWorkerMain.MockWorker::close);
        }
    }
}
