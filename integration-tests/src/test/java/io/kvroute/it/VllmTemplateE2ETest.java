package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;

/**
 * A mixed fleet in one router: vLLM-API mock workers ({@code --engine-api vllm}: no {@code /server_info},
 * vLLM's KV-event shape, hashes seeded per process and per rank), one of them data-parallel 2, found only
 * through operator templates ({@code --kv-events-worker-templates}), beside an SGLang-style worker that
 * advertises its events in {@code /server_info}. The router subscribes them all, keys the vLLM blocks by
 * tokens and the SGLang ones by the engine's hash ({@code --kv-events-hash auto}), sends a repeated prompt
 * to its holder on either kind, pins the data-parallel worker's request to the rank that holds the prompt
 * ({@code X-data-parallel-rank}, counted on the mock's ranks), rebuilds every worker's blocks from the
 * replay sockets after a router restart, and refuses a worker whose template's block size disagrees with
 * its {@code vllm:cache_config_info}.
 */
class VllmTemplateE2ETest {

    private static String chat(String text) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}],\"max_tokens\":2}";
    }

    private static String template(MockWorkerMain.MockWorker w, int blockSize) {
        List<String> pub = w.kvEventEndpoints();
        List<String> replay = w.kvEventReplayEndpoints();
        return w.baseUrl() + "=endpoint=tcp://*:" + URI.create(pub.get(0)).getPort() + ";replay-endpoint=tcp://*:"
                + URI.create(replay.get(0)).getPort() + ";topic=kv;block-size=" + blockSize + ";dp-size=" + pub.size();
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name, String... labels) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    /** Sends a chat straight to a worker, on {@code rank} when not negative. */
    private static void direct(Http http, MockWorkerMain.MockWorker w, String text, int rank) throws Exception {
        var request = http.client.newRequest(w.baseUrl() + "/v1/chat/completions").method(HttpMethod.POST)
                .timeout(30, TimeUnit.SECONDS).body(new StringRequestContent("application/json", chat(text),
                        StandardCharsets.UTF_8));
        if (rank >= 0) {
            request.headers(h -> h.put("X-data-parallel-rank", Integer.toString(rank)));
        }
        assertThat(request.send().getStatus()).isEqualTo(200);
    }

    @Test
    void mixedFleet_templatedVllmAndDp2BesideSglang_exactRouting_rankPinning_replayAfterRestart_blockSizeMismatchRefused() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<String> vllm = List.of("--port", "0", "--engine-api", "vllm", "--tokenizer-path", tokenizer,
                "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1", "--kv-events-hash-seed", "random");
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        try (Http http = new Http()) {
            workers.add(MockWorkerMain.start(vllm.toArray(String[]::new)));
            workers.add(MockWorkerMain.start(vllm.toArray(String[]::new)));
            List<String> dp2 = new ArrayList<>(vllm);
            dp2.addAll(List.of("--dp-size", "2"));
            workers.add(MockWorkerMain.start(dp2.toArray(String[]::new)));
            workers.add(MockWorkerMain.start(vllm.toArray(String[]::new))); // its template says 32, its engine 16
            workers.add(MockWorkerMain.start("--port", "0", "--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                    "--prefill-ms-per-1k", "1")); // SGLang-style: events in /server_info
            MockWorkerMain.MockWorker a = workers.get(0);
            MockWorkerMain.MockWorker b = workers.get(1);
            MockWorkerMain.MockWorker dp = workers.get(2);
            MockWorkerMain.MockWorker wrong = workers.get(3);
            MockWorkerMain.MockWorker sglang = workers.get(4);
            List<String> urls = workers.stream().map(MockWorkerMain.MockWorker::baseUrl).toList();
            String[] routerArgs = {"--port", "0", "--worker-urls", String.join(",", urls), "--policy", "cache_aware",
                "--tokenizer-path", tokenizer, "--cache-index", "exact", "--cache-affinity-min-matched-tokens", "32",
                "--health-check-interval-secs", "0.2",
                "--kv-events-worker-templates", String.join(",", template(a, 16), template(b, 16), template(dp, 16),
                        template(wrong, 32))};
            String preamble = "You route requests for a fleet of vLLM engines; answer briefly. ".repeat(6);
            List<String> texts = new ArrayList<>();
            List<String> holders = new ArrayList<>();
            int pinnedText;
            try (RouterMain.RunningRouter first = RouterMain.start(routerArgs)) {
                // four quiet workers are exact once subscribed (their replay buffers are empty); the fifth is refused
                await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, first, "kvroute_kv_events_workers_exact") == 4
                        && scrape(http, first, "kvroute_kv_events_workers_refused_total",
                                "reason=\"block_size_mismatch\"") == 1);
                assertThat(scrape(http, first, "kvroute_kv_events_workers_unknown")).isZero();

                // a prompt cached on a single-rank worker of either kind is routed back to it
                for (MockWorkerMain.MockWorker holder : List.of(a, b, sglang)) {
                    String text = preamble + ("Question for " + holder.baseUrl() + " about prefix caches. ").repeat(6);
                    double before = scrape(http, first, "kvroute_kv_events_block_events_total");
                    direct(http, holder, text, -1);
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> scrape(http, first, "kvroute_kv_events_block_events_total") > before);
                    ContentResponse routed = http.postJson(first.baseUrl() + "/v1/chat/completions", chat(text));
                    assertThat(routed.getStatus()).isEqualTo(200);
                    assertThat(routed.getHeaders().get("x-kvroute-worker")).isEqualTo(holder.baseUrl());
                    texts.add(text);
                    holders.add(holder.baseUrl());
                }

                // a prompt cached on rank 1 of the data-parallel worker: routed there and pinned to rank 1
                String text = preamble + "A question that only rank one of the data parallel engine has seen. ".repeat(6);
                double before = scrape(http, first, "kvroute_kv_events_block_events_total");
                direct(http, dp, text, 1);
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> scrape(http, first, "kvroute_kv_events_block_events_total") > before);
                long[] ranksBefore = dp.requestsByRank();
                ContentResponse routed = http.postJson(first.baseUrl() + "/v1/chat/completions", chat(text));
                assertThat(routed.getStatus()).isEqualTo(200);
                assertThat(routed.getHeaders().get("x-kvroute-worker")).isEqualTo(dp.baseUrl());
                long[] ranksAfter = dp.requestsByRank();
                // idle ranks tie and the mock's balancer would pick rank 0: rank 1 got it only through the header
                assertThat(ranksAfter[1] - ranksBefore[1]).as("served by rank 1").isEqualTo(1);
                assertThat(ranksAfter[0]).isEqualTo(ranksBefore[0]);
                pinnedText = texts.size();
                texts.add(text);
                holders.add(dp.baseUrl());
                assertThat(scrape(http, first, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"",
                        "index=\"exact\"")).isEqualTo(4);
                assertThat(scrape(http, first, "kvroute_kv_events_malformed_total")).isZero();
            }

            // a new router: the workers stay quiet, so only their replay buffers can rebuild the blocks
            try (RouterMain.RunningRouter second = RouterMain.start(routerArgs)) {
                await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, second, "kvroute_kv_events_workers_exact") == 4
                        && scrape(http, second, "kvroute_kv_events_block_events_total") > 0);
                // five replay sockets answered: a, b, both ranks of the data-parallel worker, and the SGLang worker
                await().atMost(Duration.ofSeconds(10)).until(() -> scrape(http, second, "kvroute_kv_events_replays_total",
                        "outcome=\"completed\"") >= 5);
                for (int i = 0; i < texts.size(); i++) {
                    long[] ranksBefore = dp.requestsByRank();
                    ContentResponse again = http.postJson(second.baseUrl() + "/v1/chat/completions", chat(texts.get(i)));
                    assertThat(again.getStatus()).isEqualTo(200);
                    assertThat(again.getHeaders().get("x-kvroute-worker")).as("prompt %d after restart", i)
                            .isEqualTo(holders.get(i));
                    if (i == pinnedText) {
                        assertThat(dp.requestsByRank()[1] - ranksBefore[1]).as("pinned to rank 1 again").isEqualTo(1);
                    }
                }
                assertThat(scrape(http, second, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"",
                        "index=\"exact\"")).isEqualTo(texts.size());
                assertThat(scrape(http, second, "kvroute_kv_events_workers_refused_total",
                        "reason=\"block_size_mismatch\"")).isEqualTo(1);
            }
        } finally {
            workers.forEach(MockWorkerMain.MockWorker::close);
        }
    }
}
