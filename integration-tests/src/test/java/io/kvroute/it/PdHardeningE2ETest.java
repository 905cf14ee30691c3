package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The PD path under hostile or unusual input: every request ends with a relayed result
 * or an OpenAI-style JSON error, and nothing a client sends sizes an allocation or reaches the
 * engine as a router-only field.
 */
class PdHardeningE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> FAST = List.of("--decode-ms-per-step", "2", "--prefill-ms-per-1k", "2");
    private static PdFleet fleet;
    private static Http http;

    @BeforeAll
    static void start() throws Exception {
        fleet = PdFleet.start(1, 1, FAST, FAST, List.of("--max-n", "4"));
        http = new Http();
    }

    @AfterAll
    static void stop() throws Exception {
        http.close();
        fleet.close();
    }

    static JsonNode error(ContentResponse response) throws Exception {
        return JSON.readTree(response.getContentAsString()).path("error");
    }

    @Test
    void n_isBoundedOnEveryEndpoint_withA400NamingIt() throws Exception {
        List<String[]> cases = List.of(
                new String[] {"/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1,\"n\":5}"},
                new String[] {"/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1,\"n\":2000000000}"},
                new String[] {"/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":1,\"n\":5}"},
                new String[] {"/generate", "{\"text\":\"hi\",\"sampling_params\":{\"max_new_tokens\":1,\"n\":5}}"},
                new String[] {"/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":1,\"n\":0}"},
                new String[] {"/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":1,\"n\":\"2\"}"},
                new String[] {"/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":1,\"n\":99999999999999999999999}"});
        for (String[] c : cases) {
            ContentResponse response = http.postJson(fleet.url(c[0]), c[1]);
            assertThat(response.getStatus()).as(c[1] + " -> " + response.getContentAsString()).isEqualTo(400);
            assertThat(error(response).path("type").asText()).isEqualTo("invalid_request_error");
            assertThat(error(response).path("message").asText()).contains("'n'");
        }
        ContentResponse atBound = http.postJson(fleet.url("/v1/completions"), "{\"prompt\":\"hi\",\"max_tokens\":1,\"n\":4}");
        assertThat(atBound.getStatus()).as(atBound.getContentAsString()).isEqualTo(200);
        ContentResponse nullN = http.postJson(fleet.url("/v1/completions"), "{\"prompt\":\"hi\",\"max_tokens\":1,\"n\":null}");
        assertThat(nullN.getStatus()).as(nullN.getContentAsString()).isEqualTo(200);
    }

    /** Optional fields per endpoint that a client may send as JSON null (OpenAI SDKs do). */
    static final java.util.Map<String, List<String>> OPTIONAL_FIELDS = java.util.Map.of(
            "/v1/chat/completions", List.of("model", "stream", "stream_options", "n", "max_tokens", "max_completion_tokens",
                    "temperature", "top_p", "stop", "seed", "user", "add_generation_prompt", "continue_final_message",
                    "chat_template_kwargs", "tools", "input_ids", "logprobs", "segment_index", "high_priority_request"),
            "/v1/completions", List.of("model", "stream", "stream_options", "n", "max_tokens", "temperature", "stop",
                    "echo", "suffix", "seed", "input_ids"),
            "/generate", List.of("model", "stream", "stream_options", "n", "sampling_params", "input_ids", "return_logprob",
                    "bootstrap_room"));

    static String base(String path, String extra, boolean stream) {
        String common = "\"stream\":" + stream + (extra.isEmpty() ? "" : "," + extra);
        return switch (path) {
            case "/v1/chat/completions" -> "{\"messages\":[{\"role\":\"user\",\"content\":\"null test\"}],\"max_tokens\":3,"
                    + common + "}";
            case "/v1/completions" -> "{\"prompt\":\"null test\",\"max_tokens\":3," + common + "}";
            default -> "{\"text\":\"null test\",\"sampling_params\":{\"max_new_tokens\":3}," + common + "}";
        };
    }

    /** Every optional field as JSON null, alone and all together, streaming and not: each is a plain 200. */
    static void nullMeansAbsent(Http http, java.util.function.Function<String, String> url) throws Exception {
        for (var entry : OPTIONAL_FIELDS.entrySet()) {
            String path = entry.getKey();
            List<String> fields = new java.util.ArrayList<>(entry.getValue());
            fields.remove("stream");
            List<String> extras = new java.util.ArrayList<>();
            for (String field : fields) {
                extras.add("\"" + field + "\":null");
            }
            extras.add(String.join(",", extras));
            for (boolean stream : new boolean[] {false, true}) {
                for (String extra : extras) {
                    String body = base(path, extra, stream);
                    if (stream) {
                        Http.Reply reply = http.stream(url.apply(path), body).get(30, java.util.concurrent.TimeUnit.SECONDS);
                        assertThat(reply.status()).as(body + " -> " + reply.body()).isEqualTo(200);
                        assertThat(reply.body()).as(body).doesNotContain("\"error\"");
                    } else {
                        ContentResponse response = http.postJson(url.apply(path), body);
                        assertThat(response.getStatus()).as(body + " -> " + response.getContentAsString()).isEqualTo(200);
                    }
                }
            }
            ContentResponse nullStream = http.postJson(url.apply(path), base(path, "", false).replace("\"stream\":false", "\"stream\":null"));
            assertThat(nullStream.getStatus()).as(nullStream.getContentAsString()).isEqualTo(200);
        }
    }

    @Test
    void jsonNull_meansAbsent_forEveryOptionalField_onThePdPath() throws Exception {
        nullMeansAbsent(http, fleet::url);
    }

    @Test
    void jsonNull_meansAbsent_forEveryOptionalField_onThePlainPath() throws Exception {
        try (TestFleet plain = TestFleet.start(1, List.of("--decode-ms-per-step", "1"), List.of())) {
            nullMeansAbsent(http, plain::url);
        }
    }

    @Test
    void streamOptions_ofAnotherType_isA400_notA500() throws Exception {
        ContentResponse response = http.postJson(fleet.url("/v1/completions"), base("/v1/completions", "\"stream_options\":5", true));
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(400);
        assertThat(error(response).path("message").asText()).contains("stream_options");
    }

    private static long prefillUpstreamErrors(PdFleet own) throws Exception {
        String prefillUrl = own.prefills.get(0).baseUrl();
        long errors = 0;
        for (String line : http.get(own.url("/metrics")).getContentAsString().split("\n")) {
            if (line.startsWith("kvroute_upstream_errors_total") && line.contains("\"" + prefillUrl + "\"")) {
                errors += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return errors;
    }

    /**
     * A decode side that fails (500), is busy (429) or answers another error makes the router abort
     * the prefill call; that abort is the router's doing and must not count against the (healthy)
     * prefill worker, or a dead decode worker opens the breaker of every prefill worker it is paired with.
     */
    @Test
    void decodeSideFailures_neverCountAsPrefillFailures() throws Exception {
        try (PdFleet own = PdFleet.start(1, 1, List.of("--prefill-ms-per-1k", "3000"), FAST,
                List.of("--retry-max-attempts", "1", "--cb-failure-threshold", "2"))) {
            String prompt = "word ".repeat(600);
            String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}],\"max_tokens\":2}";
            for (int status : new int[] {500, 429, 404, 503}) {
                own.decodes.get(0).handler().injectFailures(status, 1);
                ContentResponse failed = http.postJson(own.url("/v1/chat/completions"), body);
                assertThat(failed.getStatus()).as(failed.getContentAsString()).isEqualTo(status);
            }
            assertThat(prefillUpstreamErrors(own)).as("the router's own aborts of the prefill call").isZero();
            assertThat(own.router.router().breakers().allowsTraffic(own.routerView(own.prefills.get(0)).id())).isTrue();
        }
    }

    /** A decode worker answering 200 with a body of the wrong shape; the prefill is a real mock worker. */
    @Test
    void malformedNonStreamingDecodeBodies_endWithAJsonError_neverAHang() throws Exception {
        java.util.concurrent.atomic.AtomicReference<String> decodeBody = new java.util.concurrent.atomic.AtomicReference<>();
        org.eclipse.jetty.server.Server decode = new org.eclipse.jetty.server.Server();
        org.eclipse.jetty.server.ServerConnector connector = new org.eclipse.jetty.server.ServerConnector(decode);
        connector.setHost("127.0.0.1");
        decode.addConnector(connector);
        decode.setHandler(new org.eclipse.jetty.server.Handler.Abstract() {
            @Override
            public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response,
                    org.eclipse.jetty.util.Callback callback) {
                String path = org.eclipse.jetty.server.Request.getPathInContext(request);
                String answer = path.equals("/health") || path.equals("/server_info") ? "{}" : decodeBody.get();
                response.setStatus(200);
                response.getHeaders().put("content-type", "application/json");
                response.write(true, java.nio.ByteBuffer.wrap(answer.getBytes(java.nio.charset.StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        decode.start();
        io.kvroute.mock.MockWorkerMain.MockWorker prefill = io.kvroute.mock.MockWorkerMain.start(
                new String[] {"--port", "0", "--role", "prefill", "--prefill-ms-per-1k", "1"});
        io.kvroute.router.plugin.RouterMain.RunningRouter router = io.kvroute.router.plugin.RouterMain.start(new String[] {
                "--port", "0", "--prefill-urls", prefill.baseUrl(), "--decode-urls", "http://127.0.0.1:" + connector.getLocalPort(),
                "--health-check-interval-secs", "0.2", "--retry-max-attempts", "1"});
        try {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> router.router().workers().fleet()
                    .all().stream().allMatch(w -> w.role() != io.kvroute.router.worker.WorkerRole.PREFILL || w.bootstrapPort() != null));
            List<String[]> cases = List.of(
                    new String[] {"/v1/chat/completions", "{\"choices\":\"x\"}"},
                    new String[] {"/v1/chat/completions", "{\"choices\":[]}"},
                    new String[] {"/v1/chat/completions", "{\"choices\":[{\"message\":\"text\"}]}"},
                    new String[] {"/v1/chat/completions", "[1,2]"},
                    new String[] {"/v1/chat/completions", "not json"},
                    new String[] {"/v1/completions", "{\"choices\":[7]}"},
                    new String[] {"/generate", "{\"text\":\"x\",\"meta_info\":\"bad\"}"},
                    new String[] {"/generate", "{\"text\":\"x\",\"meta_info\":{\"completion_tokens\":\"many\"}}"});
            for (String[] c : cases) {
                decodeBody.set(c[1]);
                String request = switch (c[0]) {
                    case "/v1/chat/completions" -> "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}";
                    case "/v1/completions" -> "{\"prompt\":\"hi\",\"max_tokens\":2}";
                    default -> "{\"text\":\"hi\",\"sampling_params\":{\"max_new_tokens\":2}}";
                };
                ContentResponse response = http.client.newRequest(router.baseUrl() + c[0]).method("POST")
                        .timeout(10, java.util.concurrent.TimeUnit.SECONDS)
                        .body(new org.eclipse.jetty.client.StringRequestContent("application/json", request)).send();
                String desc = c[1] + " -> " + response.getStatus() + " " + response.getContentAsString();
                assertThat(response.getStatus()).as(desc).isIn(200, 502);
                JsonNode answer = JSON.readTree(response.getContentAsString());
                if (response.getStatus() == 502) {
                    assertThat(answer.path("error").path("type").asText()).as(desc).isEqualTo("upstream_error");
                }
            }
        } finally {
            router.close();
            prefill.close();
            decode.stop();
        }
    }

    private static JsonNode lastBody(io.kvroute.mock.MockWorkerMain.MockWorker worker, String rid) {
        List<JsonNode> bodies = worker.handler().recentBodies();
        for (int i = bodies.size() - 1; i >= 0; i--) {
            if (bodies.get(i).path("rid").asText().equals(rid)) {
                return bodies.get(i);
            }
        }
        return null;
    }

    /** Engine priority and segment numbering are the router's to set: a client's values never reach a worker. */
    @Test
    void routerOnlyFields_areStrippedFromClientBodies_onBothPaths() throws Exception {
        String body = "{\"rid\":\"RID\",\"messages\":[{\"role\":\"user\",\"content\":\"vip\"}],\"max_tokens\":2,"
                + "\"segment_index\":3,\"high_priority_request\":true,\"infer_high_priority\":true}";
        ContentResponse pd = http.postJson(fleet.url("/v1/chat/completions"), body.replace("RID", "strip-pd"));
        assertThat(pd.getStatus()).as(pd.getContentAsString()).isEqualTo(200);
        for (var worker : List.of(fleet.prefills.get(0), fleet.decodes.get(0))) {
            JsonNode seen = lastBody(worker, "strip-pd");
            assertThat(seen).isNotNull();
            assertThat(seen.has("segment_index") || seen.has("high_priority_request") || seen.has("infer_high_priority"))
                    .as(seen.toString()).isFalse();
        }
        try (TestFleet plain = TestFleet.start(1, List.of("--decode-ms-per-step", "1"), List.of())) {
            ContentResponse response = http.postJson(plain.url("/v1/chat/completions"), body.replace("RID", "strip-plain"));
            assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
            JsonNode seen = lastBody(plain.workers.get(0), "strip-plain");
            assertThat(seen.has("segment_index") || seen.has("high_priority_request") || seen.has("infer_high_priority"))
                    .as(seen.toString()).isFalse();
        }
    }

    /** SGLang's docs send "model": "default"; a fleet serving one model routes it (and a missing model) there. */
    @Test
    void defaultOrMissingModel_goesToTheOnlyServedModel_otherNamesAre404() throws Exception {
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1";
        assertThat(http.postJson(fleet.url("/v1/chat/completions"), chat + ",\"model\":\"default\"}").getStatus()).isEqualTo(200);
        assertThat(http.postJson(fleet.url("/v1/chat/completions"), chat + "}").getStatus()).isEqualTo(200);
        ContentResponse unknown = http.postJson(fleet.url("/v1/chat/completions"), chat + ",\"model\":\"gpt-17\"}");
        assertThat(unknown.getStatus()).isEqualTo(404);
    }
}
