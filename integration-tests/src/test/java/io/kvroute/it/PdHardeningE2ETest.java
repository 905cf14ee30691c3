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
 * The PD path under hostile or unusual input (issue 14): every request ends with a relayed result
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
}
