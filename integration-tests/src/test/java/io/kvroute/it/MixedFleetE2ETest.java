package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;

/**
 * One router over a mixed fleet on the exact index: two SGLang-style mock workers (KV events advertised in
 * {@code /server_info}, load pushed as LoadStat) and two vLLM-API mock workers ({@code --engine-api vllm}: no
 * {@code /server_info}, load only from {@code /metrics}, block hashes seeded per process and per rank), one of
 * them data parallel 2; the vLLM workers' events are found only through per-URL templates, and
 * {@code --kv-events-hash auto} keys their blocks by tokens and the SGLang ones by the engine's hash. In order:
 * <ol>
 *   <li>a prompt cached on any worker of either kind is routed back to it as an exact-index cache hit; the
 *       data-parallel worker's prompt is pinned to the rank that holds it ({@code X-data-parallel-rank}, counted
 *       on the mock's ranks); router {@code input_ids} reach the SGLang workers and never a vLLM one;</li>
 *   <li>the queue gate diverts a vLLM holder's prompt once its scraped {@code vllm:num_requests_waiting} is
 *       over {@code --worker-queue-limit};</li>
 *   <li>a new router, the workers quiet, rebuilds every worker's blocks from the replay sockets: the same
 *       prompts go to the same holders (and rank) from the exact index;</li>
 *   <li>a vLLM worker whose {@code /metrics} starts failing turns stale, which counts as saturated: shown in
 *       {@code /v1/loads}, its prompt goes elsewhere; once scrapes answer again it is fresh and routed to.</li>
 * </ol>
 * A template whose block size disagrees with the engine is {@link VllmTemplateE2ETest}.
 */
class MixedFleetE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int QUEUE_LIMIT = 2;

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    private static String template(MockWorkerMain.MockWorker w) {
        List<String> pub = w.kvEventEndpoints();
        List<String> replay = w.kvEventReplayEndpoints();
        return w.baseUrl() + "=endpoint=tcp://*:" + URI.create(pub.get(0)).getPort() + ";replay-endpoint=tcp://*:"
                + URI.create(replay.get(0)).getPort() + ";topic=kv;block-size=16;dp-size=" + pub.size();
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name, String... labels) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    private static double decisions(Http http, RouterMain.RunningRouter r, String decision) throws Exception {
        return scrape(http, r, "kvroute_cache_aware_decisions_total", "decision=\"" + decision + "\"", "index=\"exact\"");
    }

    private static Map<String, JsonNode> loadsByUrl(Http http, RouterMain.RunningRouter r) throws Exception {
        Map<String, JsonNode> out = new HashMap<>();
        for (JsonNode w : JSON.readTree(http.get(r.baseUrl() + "/v1/loads").getContentAsString()).path("workers")) {
            out.put(w.path("url").asText(), w);
        }
        return out;
    }

    /**
     * Waits until every worker is subscribed exactly and its load is fresh (a scraped worker with no reading yet is
     * saturated) and idle.
     */
    private static void awaitReady(Http http, RouterMain.RunningRouter r, List<String> urls) {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            Map<String, JsonNode> loads = loadsByUrl(http, r);
            return scrape(http, r, "kvroute_kv_events_workers_exact") == urls.size() && urls.stream().allMatch(u ->
                    loads.containsKey(u) && loads.get(u).path("fresh").asBoolean()
                            && loads.get(u).path("num_waiting_reqs").asInt() == 0
                            && loads.get(u).path("num_running_reqs").asInt() == 0);
        });
    }

    private static Request chatTo(Http http, MockWorkerMain.MockWorker w, String body, int rank) {
        Request request = http.client.newRequest(w.baseUrl() + "/v1/chat/completions").method(HttpMethod.POST)
                .timeout(60, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body, StandardCharsets.UTF_8));
        if (rank >= 0) {
            request.headers(h -> h.put("X-data-parallel-rank", Integer.toString(rank)));
        }
        return request;
    }

    /** Caches {@code text} on {@code holder} (on {@code rank} when not negative) and waits until its blocks reached the router. */
    private static void cacheOn(Http http, RouterMain.RunningRouter r, MockWorkerMain.MockWorker holder, String text, int rank)
            throws Exception {
        double before = scrape(http, r, "kvroute_kv_events_block_events_total");
        assertThat(chatTo(http, holder, chat(text), rank).send().getStatus()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(20)).until(() -> scrape(http, r, "kvroute_kv_events_block_events_total") > before);
    }

    private static ContentResponse routed(Http http, RouterMain.RunningRouter r, String text) throws Exception {
        ContentResponse response = http.postJson(r.baseUrl() + "/v1/chat/completions", chat(text));
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        return response;
    }

    /** Routes {@code text}: it must reach {@code holder} as an exact-index cache hit, on {@code rank} of a data-parallel holder. */
    private static void assertRoutedToHolder(Http http, RouterMain.RunningRouter r, String text,
            MockWorkerMain.MockWorker holder, int rank, String what) throws Exception {
        double hits = decisions(http, r, "cache_hit");
        long[] ranksBefore = holder.requestsByRank();
        ContentResponse response = routed(http, r, text);
        assertThat(response.getHeaders().get("x-kvroute-worker")).as("%s: holder", what).isEqualTo(holder.baseUrl());
        assertThat(decisions(http, r, "cache_hit")).as("%s: exact-index cache hit", what).isEqualTo(hits + 1);
        if (rank >= 0) {
            // idle ranks tie and the mock's balancer would pick rank 0: another rank is reached only through the header
            long[] ranksAfter = holder.requestsByRank();
            for (int i = 0; i < ranksAfter.length; i++) {
                assertThat(ranksAfter[i] - ranksBefore[i]).as("%s: requests served by rank %d", what, i)
                        .isEqualTo(i == rank ? 1 : 0);
            }
        }
    }

    /** Routes {@code text}, whose holder the queue gate must reject: served elsewhere, counted as a gate rejection. */
    private static void assertDiverted(Http http, RouterMain.RunningRouter r, String text, MockWorkerMain.MockWorker holder,
            String what) throws Exception {
        double rejected = scrape(http, r, "kvroute_cache_gate_rejections_total");
        double queued = decisions(http, r, "cache_worker_queued");
        ContentResponse response = routed(http, r, text);
        assertThat(response.getHeaders().get("x-kvroute-worker")).as("%s: diverted, loads %s", what, loadsByUrl(http, r))
                .isNotEqualTo(holder.baseUrl());
        assertThat(scrape(http, r, "kvroute_cache_gate_rejections_total")).as("%s: gate rejection", what)
                .isGreaterThan(rejected);
        assertThat(decisions(http, r, "cache_worker_queued")).as("%s: decision", what).isEqualTo(queued + 1);
    }

    @Test
    void mixedFleet_exactOnBothKinds_rankPinned_queueGateOnScrapedWaiting_replayAfterRestart_staleScrapeSaturates()
            throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<String> sglangArgs = List.of("--port", "0", "--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1");
        List<String> vllmArgs = new ArrayList<>(sglangArgs);
        vllmArgs.addAll(List.of("--engine-api", "vllm", "--kv-events-hash-seed", "random"));
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        try (Http http = new Http()) {
            MockWorkerMain.MockWorker sglang1 = MockWorkerMain.start(sglangArgs.toArray(String[]::new));
            workers.add(sglang1);
            MockWorkerMain.MockWorker sglang2 = MockWorkerMain.start(sglangArgs.toArray(String[]::new));
            workers.add(sglang2);
            List<String> oneSlot = new ArrayList<>(vllmArgs);
            oneSlot.addAll(List.of("--running-max-req-size", "1")); // a few requests make it queue
            MockWorkerMain.MockWorker vllm = MockWorkerMain.start(oneSlot.toArray(String[]::new));
            workers.add(vllm);
            List<String> dp2 = new ArrayList<>(vllmArgs);
            dp2.addAll(List.of("--dp-size", "2"));
            MockWorkerMain.MockWorker vllmDp = MockWorkerMain.start(dp2.toArray(String[]::new));
            workers.add(vllmDp);
            List<String> urls = workers.stream().map(MockWorkerMain.MockWorker::baseUrl).toList();
            String[] routerArgs = {"--port", "0", "--worker-urls", String.join(",", urls), "--policy", "cache_aware",
                "--tokenizer-path", tokenizer, "--cache-index", "exact", "--cache-affinity-min-matched-tokens", "32",
                "--worker-queue-limit", Integer.toString(QUEUE_LIMIT), "--load-source", "auto",
                "--health-check-interval-secs", "0.2",
                "--kv-events-worker-templates", template(vllm) + "," + template(vllmDp)};

            // the prompts of (a), replayed in (c): no shared preamble, so each has one holder
            List<String> texts = new ArrayList<>();
            List<MockWorkerMain.MockWorker> holders = new ArrayList<>();
            List<Integer> ranks = new ArrayList<>();
            for (MockWorkerMain.MockWorker holder : List.of(sglang1, sglang2, vllm)) {
                texts.add(("Question " + texts.size() + " for one worker about its prefix cache. ").repeat(6));
                holders.add(holder);
                ranks.add(-1);
            }
            texts.add("A question that only rank one of the data parallel engine has seen. ".repeat(6));
            holders.add(vllmDp);
            ranks.add(1);

            try (RouterMain.RunningRouter first = RouterMain.start(routerArgs)) {
                awaitReady(http, first, urls);
                assertThat(scrape(http, first, "kvroute_kv_events_workers_unknown")).isZero();
                Map<String, JsonNode> loads = loadsByUrl(http, first);
                for (MockWorkerMain.MockWorker w : workers) {
                    assertThat(loads.get(w.baseUrl()).path("load_source").asText()).as(w.baseUrl())
                            .isEqualTo(w.vllmApi() == null ? "loadstat" : "metrics");
                }

                // (a) a prompt cached on a worker of either kind is routed back to it from the exact index
                for (int i = 0; i < texts.size(); i++) {
                    cacheOn(http, first, holders.get(i), texts.get(i), ranks.get(i));
                    assertRoutedToHolder(http, first, texts.get(i), holders.get(i), ranks.get(i), "prompt " + i);
                }
                for (MockWorkerMain.MockWorker w : List.of(sglang1, sglang2)) {
                    List<JsonNode> bodies = w.handler().recentBodies();
                    assertThat(bodies.get(bodies.size() - 1).has("input_ids")).as("router ids to SGLang").isTrue();
                }
                for (MockWorkerMain.MockWorker w : List.of(vllm, vllmDp)) {
                    assertThat(w.handler().recentBodies()).allSatisfy(b -> assertThat(b.has("input_ids")).isFalse());
                }

                // (b) the one-slot vLLM worker queues long answers sent to it directly: the gate diverts its prompt
                // (one not in the replay list: the worker it is diverted to caches it too)
                String gated = "A question the queued vLLM engine holds but cannot serve soon. ".repeat(6);
                cacheOn(http, first, vllm, gated, -1);
                List<Request> flood = new ArrayList<>();
                for (int i = 0; i < QUEUE_LIMIT + 2; i++) {
                    Request request = chatTo(http, vllm, "{\"messages\":[{\"role\":\"user\",\"content\":\"flood " + i
                            + "\"}],\"max_tokens\":20000,\"stream\":true}", -1);
                    request.send(result -> { });
                    flood.add(request);
                }
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(
                        () -> loadsByUrl(http, first).get(vllm.baseUrl()).path("num_waiting_reqs").asInt() > QUEUE_LIMIT);
                assertDiverted(http, first, gated, vllm, "scraped waiting over the limit");
                assertThat(scrape(http, first, "kvroute_kv_events_malformed_total")).isZero();
                // the flood is abandoned: each aborted request leaves the engine at its next token (the next
                // router waits for the queue to be empty)
                flood.forEach(request -> request.abort(new CancellationException("flood no longer needed")));
            }

            // (c) a new router while the workers stay quiet: only their replay buffers can rebuild the blocks
            try (RouterMain.RunningRouter second = RouterMain.start(routerArgs)) {
                awaitReady(http, second, urls);
                // five replay sockets answered: both SGLang workers, the one-slot vLLM worker, both ranks of the other
                await().atMost(Duration.ofSeconds(10)).until(() -> scrape(http, second, "kvroute_kv_events_replays_total",
                        "outcome=\"completed\"") >= 5);
                for (int i = 0; i < texts.size(); i++) {
                    assertRoutedToHolder(http, second, texts.get(i), holders.get(i), ranks.get(i),
                            "prompt " + i + " after restart");
                }

                // (d) the data-parallel vLLM worker's /metrics fails: stale past the bound = saturated, so avoided
                String stale = "A question the data parallel engine holds while its metrics are down. ".repeat(6);
                cacheOn(http, second, vllmDp, stale, 0);
                assertThat(loadsByUrl(http, second).get(vllmDp.baseUrl()).path("stale_saturated").asBoolean()).isFalse();
                vllmDp.vllmApi().failMetrics(true);
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                        .until(() -> loadsByUrl(http, second).get(vllmDp.baseUrl()).path("stale_saturated").asBoolean());
                assertThat(loadsByUrl(http, second).get(vllmDp.baseUrl()).path("fresh").asBoolean()).isFalse();
                assertThat(scrape(http, second, "kvroute_load_workers_stale_saturated")).isEqualTo(1);
                assertDiverted(http, second, stale, vllmDp, "stale scrape");
                // scrapes answer again: fresh, not saturated, and its own prompt (held by it alone) reaches it again
                vllmDp.vllmApi().failMetrics(false);
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                    JsonNode load = loadsByUrl(http, second).get(vllmDp.baseUrl());
                    return load.path("fresh").asBoolean() && !load.path("stale_saturated").asBoolean();
                });
                assertRoutedToHolder(http, second, texts.get(3), vllmDp, 1, "data-parallel prompt after recovery");
            }
        } finally {
            workers.forEach(MockWorkerMain.MockWorker::close);
        }
    }
}
