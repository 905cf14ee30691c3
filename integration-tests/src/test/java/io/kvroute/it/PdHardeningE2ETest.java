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
}
