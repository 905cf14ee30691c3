package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;

/**
 * A mixed fleet whose engines preprocess chats differently before the chat template: a vLLM-API mock
 * (renders as vLLM, vLLM {@code vllm/entrypoints/chat_utils.py}) and an SGLang-API mock, both with the real
 * Qwen3 tokenizer and publishing KV events, behind one router on {@code --engine-type auto} (which renders
 * for SGLang) and {@code --cache-index exact}. A chat cached on the vLLM worker in a shape the two engines
 * render apart (list content, which the router's SGLang path declines; a trailing assistant turn, which
 * SGLang turns into a user turn) must find that worker's blocks, so the exact index must hash vLLM's
 * rendering for it; the SGLang worker still gets the router's SGLang ids as {@code input_ids}, the vLLM
 * worker never.
 */
class MixedFleetPreprocessingE2ETest {

    private static final String LONG = "Routers keep each conversation's prefix on the engine that cached it. ".repeat(8);

    private static String template(MockWorkerMain.MockWorker w, int blockSize) {
        return w.baseUrl() + "=endpoint=tcp://*:" + URI.create(w.kvEventEndpoints().get(0)).getPort()
                + ";replay-endpoint=tcp://*:" + URI.create(w.kvEventReplayEndpoints().get(0)).getPort()
                + ";topic=kv;block-size=" + blockSize + ";dp-size=1";
    }

    private static double scrape(Http http, RouterMain.RunningRouter r, String name, String... labels) throws Exception {
        return MetricSum.of(http.get(r.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    private static double exactHits(Http http, RouterMain.RunningRouter r) throws Exception {
        return scrape(http, r, "kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"", "index=\"exact\"");
    }

    /** Sends {@code body} to {@code holder} directly, waits for its blocks to reach the router, then through the router. */
    private static ContentResponse cachedThenRouted(Http http, RouterMain.RunningRouter router,
            MockWorkerMain.MockWorker holder, String body) throws Exception {
        double before = scrape(http, router, "kvroute_kv_events_block_events_total");
        assertThat(http.postJson(holder.baseUrl() + "/v1/chat/completions", body).getStatus()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> scrape(http, router, "kvroute_kv_events_block_events_total") > before);
        ContentResponse routed = http.postJson(router.baseUrl() + "/v1/chat/completions", body);
        assertThat(routed.getStatus()).as(routed.getContentAsString()).isEqualTo(200);
        return routed;
    }

    @Test
    void mixedFleet_exactIndexHashesEachWorkersOwnEnginesRendering() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<String> common = List.of("--port", "0", "--tokenizer-path", tokenizer, "--decode-ms-per-step", "1",
                "--prefill-ms-per-1k", "1");
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        try (Http http = new Http()) {
            List<String> vllmArgs = new ArrayList<>(common);
            vllmArgs.addAll(List.of("--engine-api", "vllm", "--kv-events-hash-seed", "random"));
            MockWorkerMain.MockWorker vllm = MockWorkerMain.start(vllmArgs.toArray(String[]::new));
            workers.add(vllm);
            MockWorkerMain.MockWorker sglang = MockWorkerMain.start(common.toArray(String[]::new));
            workers.add(sglang);
            try (RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--worker-urls",
                    vllm.baseUrl() + "," + sglang.baseUrl(), "--policy", "cache_aware", "--tokenizer-path", tokenizer,
                    "--cache-index", "exact", "--cache-affinity-min-matched-tokens", "32",
                    "--health-check-interval-secs", "0.2", "--kv-events-worker-templates", template(vllm, 16))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> scrape(http, router, "kvroute_kv_events_workers_exact") == 2);

                // list content: the router's SGLang rendering declines it, vLLM joins the text parts
                String parts = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"" + LONG
                        + "\"},{\"type\":\"text\",\"text\":\"Which worker holds this?\"}]}],\"max_tokens\":2}";
                ContentResponse routed = cachedThenRouted(http, router, vllm, parts);
                assertThat(routed.getHeaders().get("x-kvroute-worker")).isEqualTo(vllm.baseUrl());
                assertThat(exactHits(http, router)).as("list content, exact hit on the vLLM worker").isEqualTo(1);

                // a trailing assistant turn after a short user turn: SGLang renders it as a user turn, so SGLang's
                // ids share less than the 32-token threshold with what the vLLM worker cached
                String trailing = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"assistant\","
                        + "\"content\":\"" + LONG + "\"}],\"max_tokens\":2}";
                routed = cachedThenRouted(http, router, vllm, trailing);
                assertThat(routed.getHeaders().get("x-kvroute-worker")).isEqualTo(vllm.baseUrl());
                assertThat(exactHits(http, router)).as("trailing assistant, exact hit on the vLLM worker").isEqualTo(2);

                // a chat both engines render alike: cached on the SGLang worker, found there with the router's ids. Its
                // text goes on well past LONG: the vLLM worker holds LONG's blocks too (the list-content chat), and a
                // suffix shorter than a block would leave both workers with the same number of matched blocks, a tie
                // the router breaks by load
                String plain = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + LONG
                        + "A plain question that only the SGLang worker has answered so far. ".repeat(3) + "\"}],\"max_tokens\":2}";
                routed = cachedThenRouted(http, router, sglang, plain);
                assertThat(routed.getHeaders().get("x-kvroute-worker")).isEqualTo(sglang.baseUrl());
                assertThat(exactHits(http, router)).isEqualTo(3);
                assertThat(sglang.handler().recentBodies().get(sglang.handler().recentBodies().size() - 1)
                        .has("input_ids")).as("the router's SGLang ids forwarded to the SGLang worker").isTrue();
                assertThat(vllm.handler().recentBodies()).allSatisfy(b -> assertThat(b.has("input_ids")).isFalse());
            }
        } finally {
            workers.forEach(MockWorkerMain.MockWorker::close);
        }
    }
}
