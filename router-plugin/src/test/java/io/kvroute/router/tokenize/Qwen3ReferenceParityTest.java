package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The template encoder (no engine preprocessing) against strings rendered by the REAL Qwen3 template with
 * Python jinja2 in transformers' environment ({@code chatml/generate_reference.py} -> {@code chatml/qwen3_reference.jsonl}).
 */
class Qwen3ReferenceParityTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    static List<JsonNode> rows() throws IOException {
        List<JsonNode> rows = new ArrayList<>();
        try (InputStream in = Qwen3ReferenceParityTest.class.getClassLoader()
                .getResourceAsStream("chatml/qwen3_reference.jsonl");
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank()) {
                    rows.add(JSON.readTree(line));
                }
            }
        }
        return rows;
    }

    static Stream<Arguments> conversations() throws IOException {
        List<JsonNode> rows = rows();
        return java.util.stream.IntStream.range(0, rows.size())
                .mapToObj(i -> Arguments.of(i, rows.get(i).get("kind").asText(), rows.get(i)));
    }

    @Test
    void referenceSetCoversAtLeast200ConversationsOfEveryKind() throws IOException {
        List<JsonNode> rows = rows();
        assertThat(rows).hasSizeGreaterThanOrEqualTo(200);
        assertThat(rows.stream().map(r -> r.get("kind").asText()).distinct())
                .contains("single", "multi", "think", "long_system", "mid_system", "trailing_assistant",
                        "reasoning_field", "tool_role");
        assertThat(rows).anyMatch(r -> !r.get("enable_thinking").asBoolean() && r.get("add_generation_prompt").asBoolean());
        assertThat(rows).anyMatch(r -> !r.get("add_generation_prompt").asBoolean());
    }

    @ParameterizedTest(name = "[{0}] {1}")
    @MethodSource("conversations")
    void render_isByteIdenticalToJinja2Reference(int index, String kind, JsonNode row) {
        String rendered = Qwen3Fixture.plainEncoder(Qwen3Fixture.tokenizer()::encode).render(ChatInput.of(row.get("messages"),
                row.get("add_generation_prompt").asBoolean(), row.get("enable_thinking").asBoolean()));
        String expected = row.get("rendered").asText();
        assertThat(rendered.getBytes(StandardCharsets.UTF_8)).isEqualTo(expected.getBytes(StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "[{0}] {1}")
    @MethodSource("conversations")
    void encode_equalsEngineIdsOfJinja2Reference(int index, String kind, JsonNode row) {
        int[] ids = Qwen3Fixture.plainEncoder(Qwen3Fixture.tokenizer()::encode).encode(ChatInput.of(row.get("messages"),
                row.get("add_generation_prompt").asBoolean(), row.get("enable_thinking").asBoolean()));
        int[] engineIds = Qwen3Fixture.tokenizer().encode(row.get("rendered").asText());
        assertThat(ids).isEqualTo(engineIds);
    }
}
