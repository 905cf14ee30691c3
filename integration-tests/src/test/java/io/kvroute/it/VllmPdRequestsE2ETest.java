package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What each leg of a prefill/decode pair receives when one leg is a vLLM engine, read from the bytes
 * the workers got: the vLLM-API prefill worker gets the chat without the router's {@code input_ids}
 * (counted as {@code engine_unsupported}, once per vLLM leg), the SGLang decode worker gets them, and
 * both get the same bootstrap rendezvous.
 */
class VllmPdRequestsE2ETest {

    private static final List<String> FAST = List.of("--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
    private static final List<MockWorkerMain.MockWorker> WORKERS = new ArrayList<>();
    private static MockWorkerMain.MockWorker vllmPrefill;
    private static MockWorkerMain.MockWorker sglangDecode;
    private static RouterMain.RunningRouter router;
    private static Http http;

    @BeforeAll
    static void start() throws Exception {
        String dir = BundledTokenizer.qwen3().toString();
        // vLLM serves no /server_info, so the router learns the prefill's bootstrap port from its URL=PORT
        int bootstrapPort = MockWorkerMain.freePortRangeForTests("127.0.0.1", 1);
        vllmPrefill = worker(List.of("--role", "prefill", "--engine-api", "vllm", "--bootstrap-port",
                String.valueOf(bootstrapPort), "--tokenizer-path", dir));
        sglangDecode = worker(List.of("--role", "decode", "--tokenizer-path", dir));
        router = RouterMain.start("--port", "0", "--prefill-urls", vllmPrefill.baseUrl() + "=" + bootstrapPort,
                "--decode-urls", sglangDecode.baseUrl(), "--tokenizer-path", dir, "--health-check-interval-secs", "0.2");
        http = new Http();
        // the keying of each leg's body waits for discovery to type the workers
        await().atMost(Duration.ofSeconds(20)).until(() -> routerView(vllmPrefill).engine() == EngineType.VLLM
                && routerView(sglangDecode).engine() == EngineType.SGLANG);
    }

    private static MockWorkerMain.MockWorker worker(List<String> extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("--port", "0"));
        args.addAll(FAST);
        args.addAll(extra);
        MockWorkerMain.MockWorker w = MockWorkerMain.start(args.toArray(String[]::new));
        WORKERS.add(w);
        return w;
    }

    private static Worker routerView(MockWorkerMain.MockWorker worker) {
        return router.router().workers().get(Worker.idFor(worker.baseUrl())).orElseThrow();
    }

    @AfterAll
    static void stop() throws Exception {
        if (http != null) {
            http.close();
        }
        if (router != null) {
            router.close();
        }
        for (MockWorkerMain.MockWorker w : WORKERS) {
            w.close();
        }
    }

    private static JsonNode bodyFor(MockWorkerMain.MockWorker worker, String rid) {
        List<JsonNode> bodies = worker.handler().recentBodies();
        for (int i = bodies.size() - 1; i >= 0; i--) {
            if (bodies.get(i).path("rid").asText().equals(rid)) {
                return bodies.get(i);
            }
        }
        throw new AssertionError("no body with rid " + rid + " at " + worker.baseUrl());
    }

    private static double engineUnsupported() throws Exception {
        return MetricSum.of(http.get(router.baseUrl() + "/metrics").getContentAsString(),
                "kvroute_input_ids_forwarding_total", "outcome=\"engine_unsupported\"");
    }

    @Test
    void vllmPrefillLeg_getsNoRouterInputIds_whileTheSglangDecodeLegDoes() throws Exception {
        double before = engineUnsupported();
        for (int i = 0; i < 2; i++) {
            String rid = "pd-vllm-" + i;
            String chat = "{\"rid\":\"" + rid + "\",\"messages\":[{\"role\":\"user\",\"content\":"
                    + "\"What is the weather in Paris?\"}],\"max_tokens\":3}";
            ContentResponse response = http.postJson(router.baseUrl() + "/v1/chat/completions", chat);
            assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);

            JsonNode atPrefill = bodyFor(vllmPrefill, rid);
            JsonNode atDecode = bodyFor(sglangDecode, rid);
            assertThat(atPrefill.has("input_ids")).as("vLLM prefill leg").isFalse();
            assertThat(atPrefill.path("messages").get(0).path("content").asText())
                    .isEqualTo("What is the weather in Paris?");
            assertThat(atDecode.path("input_ids").isArray()).as("SGLang decode leg").isTrue();
            assertThat(atDecode.path("input_ids").size()).isPositive();
            // the rendezvous is the same on both legs
            assertThat(atPrefill.path("bootstrap_room")).isEqualTo(atDecode.path("bootstrap_room"));
            assertThat(atPrefill.path("bootstrap_port")).isEqualTo(atDecode.path("bootstrap_port"));
        }
        // one per vLLM leg sent without the ids: the prefill leg of each of the two requests
        assertThat(engineUnsupported()).isEqualTo(before + 2);
    }
}
