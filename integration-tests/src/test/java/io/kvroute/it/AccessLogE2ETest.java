package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --access-log FILE} over real HTTP: one JSON line per inference request, written by Jetty's
 * request log from the routing facts the dispatch recorded, for a plain, a streaming, a PD (with
 * continuations), a retried-then-failed (503) and a rejected (400) request; probes are not logged.
 */
class AccessLogE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void oneJsonLinePerInferenceRequest_withTheRoutingDecision() throws Exception {
        Path log = dir.resolve("access.log");
        try (ObservabilityFleet fleet = ObservabilityFleet.start(List.of("--access-log", log.toString()));
                Http http = new Http()) {
            String plain = http.postJson(fleet.url("/v1/chat/completions"),
                    ObservabilityFleet.chat(ObservabilityFleet.MODEL, "hello plain", 4, false)).getHeaders().get("x-kvroute-worker");
            assertThat(http.stream(fleet.url("/v1/chat/completions"),
                    ObservabilityFleet.chat(ObservabilityFleet.MODEL, "hello stream", 6, true)).get().status()).isEqualTo(200);
            assertThat(http.stream(fleet.url("/v1/completions"), "{\"model\":\"" + ObservabilityFleet.PD_MODEL
                    + "\",\"stream\":true,\"max_tokens\":12,\"prompt\":\"pd prompt\"}").get().status()).isEqualTo(200);
            assertThat(http.postJson(fleet.url("/v1/completions"),
                    ObservabilityFleet.completion(ObservabilityFleet.BROKEN_MODEL, "doomed", 4)).getStatus()).isEqualTo(503);
            assertThat(http.postJson(fleet.url("/v1/completions"), "{\"model\":").getStatus()).isEqualTo(400);
            assertThat(http.get(fleet.url("/healthz")).getStatus()).isEqualTo(200);

            await().atMost(Duration.ofSeconds(10)).until(() -> lines(log).size() >= 5);
            List<JsonNode> entries = lines(log);
            assertThat(entries).hasSize(5);

            JsonNode p = entries.get(0);
            assertThat(p.path("endpoint").asText()).isEqualTo("/v1/chat/completions");
            assertThat(p.path("model").asText()).isEqualTo(ObservabilityFleet.MODEL);
            assertThat(p.path("status").asInt()).isEqualTo(200);
            assertThat(p.path("bytes").asLong()).isPositive();
            assertThat(p.path("worker").asText()).isEqualTo(plain);
            assertThat(p.path("policy").asText()).isEqualTo("cache_aware");
            assertThat(p.path("decision_reason").asText()).isNotBlank();
            assertThat(p.has("matched_tokens")).isTrue();
            assertThat(p.path("retries").asInt()).isZero();
            assertThat(p.path("ttft_ms").asDouble()).isPositive().isLessThanOrEqualTo(p.path("total_ms").asDouble());
            assertThat(Instant.parse(p.path("time").asText())).isBefore(Instant.now().plusSeconds(1));

            JsonNode s = entries.get(1);
            assertThat(s.path("status").asInt()).isEqualTo(200);
            assertThat(s.path("ttft_ms").asDouble()).isPositive().isLessThan(s.path("total_ms").asDouble());

            JsonNode pd = entries.get(2);
            assertThat(pd.path("model").asText()).isEqualTo(ObservabilityFleet.PD_MODEL);
            assertThat(pd.path("status").asInt()).isEqualTo(200);
            assertThat(pd.path("worker").asText()).isEqualTo(fleet.decode.baseUrl());
            assertThat(pd.path("prefill_worker").asText()).isEqualTo(fleet.prefill.baseUrl());
            assertThat(pd.path("segments").asInt()).isEqualTo(3); // 12 tokens in segments of 5
            assertThat(pd.path("retries").asInt()).isZero();
            assertThat(pd.path("ttft_ms").asDouble()).isPositive();

            JsonNode failed = entries.get(3);
            assertThat(failed.path("status").asInt()).isEqualTo(503);
            assertThat(failed.path("worker").asText()).isEqualTo(fleet.failing.baseUrl());
            assertThat(failed.path("retries").asInt()).isEqualTo(2); // three attempts, all 503
            // the last attempt's 503 body is relayed verbatim: its first byte counts
            assertThat(failed.path("ttft_ms").asDouble()).isPositive().isLessThanOrEqualTo(failed.path("total_ms").asDouble());

            JsonNode rejected = entries.get(4);
            assertThat(rejected.path("status").asInt()).isEqualTo(400);
            assertThat(rejected.has("worker")).isFalse();
            assertThat(rejected.has("policy")).isFalse();
        }
    }

    private static List<JsonNode> lines(Path log) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        if (!Files.exists(log)) {
            return out;
        }
        for (String line : Files.readAllLines(log)) {
            if (!line.isBlank()) {
                out.add(JSON.readTree(line));
            }
        }
        return out;
    }
}
