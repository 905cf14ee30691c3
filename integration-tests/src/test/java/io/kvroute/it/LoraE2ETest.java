package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * LoRA adapters end to end: real mock workers speaking vLLM's API with adapter slots, a real router.
 * Discovery from {@code /v1/models} cards, routing by adapter name to the workers that serve it,
 * adapter residency over random placement, dynamic loading with single flight, and the router's
 * errors when a load fails (502) or times out (504); the exact KV index over vLLM-shaped KV events that
 * name the adapter ({@code lora_name}).
 */
class LoraE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
    private RouterMain.RunningRouter router;
    private Http http;

    @BeforeEach
    void setUp() throws Exception {
        http = new Http();
    }

    @AfterEach
    void tearDown() throws Exception {
        http.close();
        if (router != null) {
            router.close();
        }
        workers.forEach(MockWorkerMain.MockWorker::close);
    }

    private MockWorkerMain.MockWorker worker(String... loraArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of("--port", "0", "--engine-api", "vllm", "--model-id", "base",
                "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1", "--kv-events-endpoint", "none"));
        args.addAll(List.of(loraArgs));
        MockWorkerMain.MockWorker w = MockWorkerMain.start(args.toArray(String[]::new));
        workers.add(w);
        return w;
    }

    private void router(String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("--port", "0", "--policy", "cache_aware", "--engine-type", "vllm",
                "--health-check-interval-secs", "0.2", "--cache-index", "approximate", "--worker-urls",
                String.join(",", workers.stream().map(MockWorkerMain.MockWorker::baseUrl).toList())));
        args.addAll(List.of(extra));
        router = RouterMain.start(args.toArray(String[]::new));
    }

    private ContentResponse complete(String model, String prompt) throws Exception {
        return http.postJson(router.baseUrl() + "/v1/completions",
                "{\"model\":\"" + model + "\",\"prompt\":\"" + prompt + "\",\"max_tokens\":1}");
    }

    private double metric(String name, String... labels) throws Exception {
        return MetricSum.of(http.get(router.baseUrl() + "/metrics").getContentAsString(), name, labels);
    }

    private JsonNode lora(MockWorkerMain.MockWorker w) throws Exception {
        return JSON.readTree(http.get(w.baseUrl() + "/debug/lora").getContent());
    }

    private static boolean serves(JsonNode debug, String adapter) {
        for (JsonNode n : debug.path("running")) {
            if (n.asText().equals(adapter)) {
                return true;
            }
        }
        return false;
    }

    private void awaitAdapterListed(String adapter) {
        await().atMost(WAIT).until(() -> http.get(router.baseUrl() + "/v1/models").getContentAsString()
                .contains("\"id\":\"" + adapter + "\""));
    }

    @Test
    void adaptersByModelName_goToTheWorkersThatServeThem_andStayResident() throws Exception {
        MockWorkerMain.MockWorker w0 = worker("--max-loras", "2", "--lora-load-ms", "30", "--lora-modules", "sql=/l/sql");
        MockWorkerMain.MockWorker w1 = worker("--max-loras", "2", "--lora-load-ms", "30",
                "--lora-modules", "sql=/l/sql,chat=/l/chat");
        MockWorkerMain.MockWorker w2 = worker("--max-loras", "2", "--lora-load-ms", "30");
        router("--lora-affinity-weight", "8");
        awaitAdapterListed("chat");
        awaitAdapterListed("sql");
        JsonNode card = null;
        for (JsonNode c : JSON.readTree(http.get(router.baseUrl() + "/v1/models").getContent()).path("data")) {
            if (c.path("id").asText().equals("sql")) {
                card = c;
            }
        }
        assertThat(card.path("parent").asText()).isEqualTo("base");

        // chat is served by w1 alone
        for (int i = 0; i < 5; i++) {
            ContentResponse r = complete("chat", "chat prompt number " + i);
            assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        }
        assertThat(w1.handler().requests()).isEqualTo(5);
        assertThat(w0.handler().requests() + w2.handler().requests()).isZero();

        // sql, different prompts (no prefix holder): residency keeps it on one worker, one load in all
        for (int i = 0; i < 12; i++) {
            assertThat(complete("sql", "distinct sql prompt " + i).getStatus()).isEqualTo(200);
        }
        long sqlLoads = lora(w0).path("loads").asLong() + lora(w1).path("loads").asLong() - 1; // w1 loaded chat once
        assertThat(sqlLoads).isEqualTo(1);
        assertThat(w2.handler().requests()).isZero(); // does not serve sql
        assertThat(metric("kvroute_lora_decisions_total", "outcome=\"resident\"")).isGreaterThanOrEqualTo(15);

        // neither a base model nor an adapter: the router's 404
        ContentResponse unknown = complete("nope", "hi");
        assertThat(unknown.getStatus()).isEqualTo(404);
        assertThat(unknown.getContentAsString()).contains("model_not_found");
        // the base model still routes over every worker
        assertThat(complete("base", "plain base prompt").getStatus()).isEqualTo(200);
    }

    private static String chat(String model, String text) {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"" + text
                + "\"}],\"max_tokens\":2}";
    }

    /** vLLM's --kv-events-config for {@code w}, as a --kv-events-worker-templates entry (vLLM has no discovery). */
    private static String kvTemplate(MockWorkerMain.MockWorker w) {
        return w.baseUrl() + "=endpoint=tcp://*:" + URI.create(w.kvEventEndpoints().get(0)).getPort()
                + ";replay-endpoint=tcp://*:" + URI.create(w.kvEventReplayEndpoints().get(0)).getPort()
                + ";topic=kv;block-size=" + w.engine().info().pageSize() + ";dp-size=1";
    }

    @Test
    void exactIndex_adapterBlocksByLoraName_goToTheirHolder_andNeverHitForAnotherAdapterOrTheBase() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        List<MockWorkerMain.MockWorker> pair = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            // vLLM-like: hashes seeded per process, events in vLLM's shape, both adapters served everywhere
            MockWorkerMain.MockWorker w = MockWorkerMain.start("--port", "0", "--engine-api", "vllm", "--model-id", "base",
                    "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1", "--tokenizer-path", tokenizer,
                    "--kv-events-hash-seed", "random", "--max-loras", "2", "--lora-load-ms", "5",
                    "--lora-modules", "sql=/l/sql,chat=/l/chat");
            workers.add(w);
            pair.add(w);
        }
        router = RouterMain.start("--port", "0", "--policy", "cache_aware", "--engine-type", "vllm",
                "--health-check-interval-secs", "0.2", "--cache-index", "exact", "--tokenizer-path", tokenizer,
                "--cache-affinity-min-matched-tokens", "32", "--worker-urls",
                String.join(",", pair.stream().map(MockWorkerMain.MockWorker::baseUrl).toList()),
                "--kv-events-worker-templates", String.join(",", kvTemplate(pair.get(0)), kvTemplate(pair.get(1))));
        awaitAdapterListed("sql");
        awaitAdapterListed("chat");
        await().atMost(WAIT).until(() -> metric("kvroute_kv_events_workers_exact") == 2);
        List<String> texts = new ArrayList<>();
        // each prompt enters one worker's cache under adapter sql, behind the router's back; no shared preamble,
        // which later requests under another adapter would rightly find cached under that adapter
        for (int i = 0; i < 4; i++) {
            MockWorkerMain.MockWorker holder = pair.get(i % 2);
            String text = ("Question " + i + " asks which index serves the orders table. ").repeat(8);
            double before = metric("kvroute_kv_events_block_events_total");
            ContentResponse direct = http.postJson(holder.baseUrl() + "/v1/chat/completions", chat("sql", text));
            assertThat(direct.getStatus()).as(direct.getContentAsString()).isEqualTo(200);
            await().atMost(WAIT).until(() -> metric("kvroute_kv_events_block_events_total") > before);
            ContentResponse routed = http.postJson(router.baseUrl() + "/v1/chat/completions", chat("sql", text));
            assertThat(routed.getStatus()).isEqualTo(200);
            assertThat(routed.getHeaders().get("x-kvroute-worker")).as("prompt %d", i).isEqualTo(holder.baseUrl());
            texts.add(text);
        }
        assertThat(metric("kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"", "index=\"exact\""))
                .isEqualTo(4);
        // the same texts under the other adapter and under the base model: no worker holds them there
        for (String text : texts) {
            for (String model : List.of("chat", "base")) {
                ContentResponse other = http.postJson(router.baseUrl() + "/v1/chat/completions", chat(model, text));
                assertThat(other.getStatus()).isEqualTo(200);
            }
        }
        assertThat(metric("kvroute_cache_aware_decisions_total", "decision=\"cache_hit\"", "index=\"exact\""))
                .as("another adapter's or the base model's request matched sql's blocks").isEqualTo(4);
        assertThat(metric("kvroute_kv_events_malformed_total")).isZero();
    }

    @Test
    void aWorkerWithNoAdapters_isReadAgain_soAnAdapterLoadedOutOfBandIsRouted() throws Exception {
        // SGLang surface, load over ZeroMQ: neither its model list nor its load says LoRA at first
        MockWorkerMain.MockWorker w = MockWorkerMain.start("--port", "0", "--model-id", "base", "--decode-ms-per-step",
                "1", "--prefill-ms-per-1k", "1", "--kv-events-endpoint", "none", "--max-loras", "2",
                "--lora-runtime-updating");
        workers.add(w);
        router = RouterMain.start("--port", "0", "--policy", "cache_aware", "--health-check-interval-secs", "0.2",
                "--cache-index", "approximate", "--lora-models-refresh-secs", "0.5", "--worker-urls", w.baseUrl());
        await().atMost(WAIT).until(() -> complete("base", "warm up").getStatus() == 200);
        assertThat(complete("sql", "hi").getStatus()).isEqualTo(404); // no worker serves it yet
        // an operator loads the adapter onto the worker directly, behind the router's back
        ContentResponse load = http.postJson(w.baseUrl() + "/load_lora_adapter",
                "{\"lora_name\":\"sql\",\"lora_path\":\"/l/sql\"}");
        assertThat(load.getStatus()).as(load.getContentAsString()).isEqualTo(200);
        awaitAdapterListed("sql");
        ContentResponse routed = complete("sql", "now it is served");
        assertThat(routed.getStatus()).as(routed.getContentAsString()).isEqualTo(200);
        assertThat(routed.getHeaders().get("x-kvroute-worker")).isEqualTo(w.baseUrl());
    }

    @Test
    void sglangSlotGauges_reachTheRoutersAdapterView() throws Exception {
        MockWorkerMain.MockWorker w = MockWorkerMain.start("--port", "0", "--model-id", "base", "--decode-ms-per-step",
                "20", "--prefill-ms-per-1k", "1", "--kv-events-endpoint", "none", "--enable-metrics", "--max-loras", "3",
                "--lora-load-ms", "5", "--lora-modules", "sql=/l/sql,chat=/l/chat");
        workers.add(w);
        String metrics = http.get(w.baseUrl() + "/metrics").getContentAsString();
        assertThat(metrics).contains("sglang:lora_pool_slots_total{engine_type=\"unified\",model_name=\"base\","
                + "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"} 3.0");
        router = RouterMain.start("--port", "0", "--policy", "cache_aware", "--health-check-interval-secs", "0.2",
                "--cache-index", "approximate", "--load-source", "metrics", "--metrics-scrape-interval-ms", "50",
                "--worker-urls", w.baseUrl());
        awaitAdapterListed("sql");
        await().atMost(WAIT).until(() -> view().maxLoras() == 3 && view().slotsUsed() == 0);
        // two adapters with a request in flight: SGLang counts the running batch's distinct adapters
        List<CompletableFuture<Http.Reply>> replies = new ArrayList<>();
        for (String adapter : List.of("sql", "chat")) {
            replies.add(http.stream(router.baseUrl() + "/v1/completions",
                    "{\"model\":\"" + adapter + "\",\"prompt\":\"slow\",\"max_tokens\":100,\"stream\":true}"));
        }
        await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> view().slotsUsed() == 2);
        for (CompletableFuture<Http.Reply> r : replies) {
            assertThat(r.get().status()).isEqualTo(200);
        }
        await().atMost(WAIT).until(() -> view().slotsUsed() == 0);
    }

    @Test
    void pdRequestsForAnAdapter_pairThePrefillAndDecodeWorkersThatServeIt() throws Exception {
        List<String> args = List.of("--model-id", "base", "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1",
                "--kv-events-endpoint", "none", "--max-loras", "2", "--lora-load-ms", "5", "--lora-runtime-updating");
        try (PdFleet pd = PdFleet.start(2, 2, args, args, List.of("--lora-models-refresh-secs", "0.3"))) {
            MockWorkerMain.MockWorker prefill = pd.prefills.get(1);
            MockWorkerMain.MockWorker decode = pd.decodes.get(0);
            for (MockWorkerMain.MockWorker w : List.of(prefill, decode)) {
                assertThat(http.postJson(w.baseUrl() + "/load_lora_adapter",
                        "{\"lora_name\":\"sql\",\"lora_path\":\"/l/sql\"}").getStatus()).isEqualTo(200);
            }
            // both workers list it (read again through --lora-models-refresh-secs)
            await().atMost(WAIT).until(() -> pd.router.router().adapters().current().byWorker().values().stream()
                    .filter(a -> a.listed().contains("sql")).count() == 2);
            long otherPrefill = pd.prefills.get(0).handler().requests();
            long otherDecode = pd.decodes.get(1).handler().requests();
            for (int i = 0; i < 8; i++) {
                ContentResponse r = http.postJson(pd.url("/v1/completions"),
                        "{\"model\":\"sql\",\"prompt\":\"pd sql prompt " + i + "\",\"max_tokens\":3}");
                assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
                assertThat(r.getHeaders().get("x-kvroute-decode-url")).isEqualTo(decode.baseUrl());
            }
            assertThat(pd.prefills.get(0).handler().requests()).as("prefill without sql").isEqualTo(otherPrefill);
            assertThat(pd.decodes.get(1).handler().requests()).as("decode without sql").isEqualTo(otherDecode);
            assertThat(MetricSum.of(http.get(pd.url("/metrics")).getContentAsString(), "kvroute_lora_decisions_total"))
                    .isEqualTo(8);
            // the base model still pairs over every worker
            assertThat(http.postJson(pd.url("/v1/completions"),
                    "{\"model\":\"base\",\"prompt\":\"pd base\",\"max_tokens\":3}").getStatus()).isEqualTo(200);
        }
    }

    /** The router's view of the only worker's adapters. */
    private io.kvroute.router.lora.WorkerAdapters view() {
        return router.router().adapters().current().byWorker().values().stream().findFirst()
                .orElse(io.kvroute.router.lora.WorkerAdapters.UNKNOWN);
    }

    @Test
    void dynamicLoading_loadsOncePerWorker_andTheAdapterIsServedFromThen() throws Exception {
        MockWorkerMain.MockWorker w0 = worker("--max-loras", "2", "--lora-load-ms", "200", "--lora-runtime-updating");
        MockWorkerMain.MockWorker w1 = worker("--max-loras", "2", "--lora-load-ms", "200", "--lora-runtime-updating");
        router("--lora-dynamic-loading", "--lora-adapter", "sql=/l/sql,chat=/l/chat");
        await().atMost(WAIT).until(() -> complete("base", "warm up").getStatus() == 200);

        // 16 concurrent first requests for chat: every worker chosen loads it once, whatever the concurrency
        List<CompletableFuture<Http.Reply>> replies = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            replies.add(http.stream(router.baseUrl() + "/v1/completions",
                    "{\"model\":\"chat\",\"prompt\":\"concurrent chat " + i + "\",\"max_tokens\":1}"));
        }
        for (CompletableFuture<Http.Reply> r : replies) {
            assertThat(r.get().status()).as(r.get().body()).isEqualTo(200);
        }
        int servingChat = 0;
        for (MockWorkerMain.MockWorker w : List.of(w0, w1)) {
            servingChat += http.get(w.baseUrl() + "/v1/models").getContentAsString().contains("\"id\":\"chat\"") ? 1 : 0;
        }
        // requests waiting for a load count as the worker's load, so 16 at once spread over both workers
        assertThat(servingChat).isEqualTo(2);
        assertThat(metric("kvroute_lora_loads_total", "outcome=\"ok\"")).isEqualTo(servingChat);
        assertThat(metric("kvroute_lora_load_seconds_count")).isEqualTo(servingChat);

        // from then on the adapter is served without another load
        double before = metric("kvroute_lora_loads_total", "outcome=\"ok\"");
        for (int i = 0; i < 5; i++) {
            assertThat(complete("chat", "later chat " + i).getStatus()).isEqualTo(200);
        }
        assertThat(metric("kvroute_lora_loads_total", "outcome=\"ok\"")).isEqualTo(before);
        // a name outside the catalogue is no adapter: 404
        assertThat(complete("unlisted", "hi").getStatus()).isEqualTo(404);
    }

    @Test
    void failedLoad_is502_andATimedOutLoad504_neverTheClientsFault() throws Exception {
        worker("--max-loras", "2"); // no runtime updating: the load endpoint answers 404
        router("--lora-dynamic-loading", "--lora-adapter", "sql=/l/sql");
        await().atMost(WAIT).until(() -> complete("base", "warm up").getStatus() == 200);
        ContentResponse failed = complete("sql", "hi");
        assertThat(failed.getStatus()).isEqualTo(502);
        JsonNode error = JSON.readTree(failed.getContent()).path("error");
        assertThat(error.path("message").asText()).contains("could not load adapter 'sql'").contains("404");
        assertThat(metric("kvroute_lora_loads_total", "outcome=\"failed\"")).isEqualTo(1);
        router.close();
        router = null;
        workers.forEach(MockWorkerMain.MockWorker::close);
        workers.clear();

        worker("--max-loras", "2", "--lora-runtime-updating", "--lora-load-ms", "3000");
        router("--lora-dynamic-loading", "--lora-adapter", "sql=/l/sql", "--lora-load-timeout-ms", "200");
        await().atMost(WAIT).until(() -> complete("base", "warm up").getStatus() == 200);
        ContentResponse timedOut = complete("sql", "hi");
        assertThat(timedOut.getStatus()).isEqualTo(504);
        assertThat(timedOut.getContentAsString()).contains("adapter load timeout");
        assertThat(metric("kvroute_lora_loads_total", "outcome=\"timeout\"")).isEqualTo(1);
    }
}
