package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.tenant.TenantDirectory;
import io.kvroute.router.tokenize.RequestTokens;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The output a tenant is charged is the output it was generated, through the real relay: a router with a tenants file
 * and the router-side queue (whose fair counters the service is) over a mock worker, one tenant per answer shape, each tenant's {@code kvroute_qos_service_tokens_total} (less its
 * refunds) read from the scrape. A request is charged its input (body bytes / 4: the mock model has no tokenizer;
 * round_robin reports no cached prefix) plus its output tokens; the streams' protocol events (the finish chunk, the
 * usage chunk, {@code [DONE]}, SGLang's final frame) are not output.
 */
class QosOutputChargeE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> TENANTS = List.of("json", "chat", "usage", "completions", "generate");
    private static final int MAX_TOKENS = 12;

    /** Per tenant, in {@link #TENANTS} order: its request's input estimate, and the tokens its answer says it got. */
    private final long[] inputs = new long[TENANTS.size()];
    private final long[] generated = new long[TENANTS.size()];

    @TempDir
    Path dir;

    @Test
    void eachTenantIsChargedItsInputPlusTheTokensGenerated_whateverTheAnswersShape() throws Exception {
        StringBuilder file = new StringBuilder("tenants:\n");
        for (String t : TENANTS) {
            file.append("  - {name: ").append(t).append(", api_key_sha256: ").append(TenantDirectory.sha256Hex("sk-" + t))
                    .append("}\n");
        }
        Path tenants = dir.resolve("tenants.yaml");
        Files.writeString(tenants, file.toString());
        String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"count the kettles on the shelf\"}]";
        try (TestFleet fleet = TestFleet.start(1, List.of(), List.of("--policy", "round_robin", "--tenants-file",
                tenants.toString(), "--qos-worker-capacity-tokens", "100000")); Http http = new Http()) {
            String chat = fleet.url("/v1/chat/completions");
            charge(http, "json", chat, "{\"model\":\"mock-model\",\"max_tokens\":" + MAX_TOKENS + "," + messages + "}");
            charge(http, "chat", chat, "{\"model\":\"mock-model\",\"stream\":true,\"max_tokens\":" + MAX_TOKENS + ","
                    + messages + "}");
            charge(http, "usage", chat, "{\"model\":\"mock-model\",\"stream\":true,\"stream_options\":{\"include_usage\":"
                    + "true},\"max_tokens\":" + MAX_TOKENS + "," + messages + "}");
            charge(http, "completions", fleet.url("/v1/completions"), "{\"model\":\"mock-model\",\"stream\":true,"
                    + "\"max_tokens\":" + MAX_TOKENS + ",\"prompt\":\"count the kettles on the shelf\"}");
            charge(http, "generate", fleet.url("/generate"), "{\"text\":\"count the kettles on the shelf\",\"stream\":true,"
                    + "\"sampling_params\":{\"max_new_tokens\":" + MAX_TOKENS + "}}");

            String scrape = http.get(fleet.url("/metrics")).getContentAsString();
            Map<String, Double> charged = new TreeMap<>();
            Map<String, Double> expected = new TreeMap<>();
            for (int i = 0; i < TENANTS.size(); i++) {
                String label = "tenant=\"" + TENANTS.get(i) + "\"";
                charged.put(TENANTS.get(i), MetricSum.of(scrape, "kvroute_qos_service_tokens_total", label)
                        - MetricSum.of(scrape, "kvroute_qos_service_refunded_tokens_total", label));
                expected.put(TENANTS.get(i), (double) (inputs[i] + generated[i]));
            }
            assertThat(charged).as("weighted tokens charged per tenant: input + generated").isEqualTo(expected);
        }
    }

    /** Sends one request as {@code tenant} and notes its input estimate and the tokens its answer says it generated. */
    private void charge(Http http, String tenant, String url, String body) throws Exception {
        var response = http.client.newRequest(url).method(HttpMethod.POST).timeout(30, TimeUnit.SECONDS)
                .headers(h -> h.put("Authorization", "Bearer sk-" + tenant))
                .body(new StringRequestContent("application/json", body)).send();
        assertThat(response.getStatus()).as(tenant + ": " + response.getContentAsString()).isEqualTo(200);
        int i = TENANTS.indexOf(tenant);
        inputs[i] = RequestTokens.estimateTokens(body.getBytes(StandardCharsets.UTF_8).length);
        generated[i] = generatedTokens(tenant, response.getContentAsString());
        assertThat(generated[i]).as(tenant + " generated").isEqualTo(MAX_TOKENS);
    }

    /**
     * What the answer says was generated: a usage's or SGLang meta_info's count where it has one, else (a stream without
     * usage) its chunks that carry a token's text.
     */
    private static long generatedTokens(String tenant, String answer) throws Exception {
        if (tenant.equals("json")) {
            return JSON.readTree(answer).path("usage").path("completion_tokens").asLong(-1);
        }
        long chunksWithText = 0;
        long stated = -1;
        for (String line : answer.split("\n")) {
            if (!line.startsWith("data: {")) {
                continue;
            }
            JsonNode event = JSON.readTree(line.substring(6));
            JsonNode choice = event.path("choices").path(0);
            if (!choice.path("delta").path("content").asText("").isEmpty() || !choice.path("text").asText("").isEmpty()) {
                chunksWithText++;
            }
            if (event.path("usage").has("completion_tokens")) {
                stated = event.path("usage").path("completion_tokens").asLong();
            } else if (event.path("meta_info").has("completion_tokens")) {
                stated = event.path("meta_info").path("completion_tokens").asLong();
            }
        }
        return stated >= 0 ? stated : chunksWithText;
    }
}
