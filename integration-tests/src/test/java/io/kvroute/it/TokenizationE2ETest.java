package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.RequestTokens;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Ingress tokenization end to end: the router tokenizes chats once with the real Qwen3 tokenizer and
 * forwards {@code input_ids}; a mock worker with the same tokenizer checks they are exactly what it
 * would have computed itself, and that ids arrive only when the forwarding guard allows.
 */
class TokenizationE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestFleet fleet;
    private static TestFleet disabled;
    private static Http http;
    private static TokenizerRegistry engineSide;
    private static ModelTokenizer engineTokenizer;

    @BeforeAll
    static void start() throws Exception {
        Path dir = BundledTokenizer.qwen3();
        List<String> worker = List.of("--tokenizer-path", dir.toString(), "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
        fleet = TestFleet.start(1, worker, List.of("--tokenizer-path", dir.toString()));
        disabled = TestFleet.start(1, worker, List.of("--tokenizer-path", dir.toString(), "--disable-input-ids-forwarding"));
        http = new Http();
        engineSide = TokenizerRegistry.load(Map.of("m", dir));
        engineTokenizer = engineSide.forModel("m").orElseThrow();
    }

    @AfterAll
    static void stop() throws Exception {
        http.close();
        fleet.close();
        disabled.close();
        engineSide.close();
    }

    private static JsonNode lastBodyAtWorker(TestFleet f) {
        List<JsonNode> bodies = f.workers.get(0).handler().recentBodies();
        return bodies.get(bodies.size() - 1);
    }

    private static int[] ids(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }

    /** The engine's own encoding of a body's messages, computed the way the mock worker does. */
    private static int[] engineIds(JsonNode body) {
        ObjectNode copy = body.deepCopy();
        copy.remove("input_ids");
        return RequestTokens.of(copy, Optional.of(engineTokenizer)).orElseThrow().ids();
    }

    @Test
    void parity_forwardedIdsEqualTheWorkersOwnEncoding_forEveryReferenceConversation() throws Exception {
        List<JsonNode> conversations = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(
                TokenizationE2ETest.class.getResourceAsStream("/chatml/qwen3_reference.jsonl"), StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                conversations.add(JSON.readTree(line));
            }
        }
        // Each reference conversation also as it would be sent for the next turn: trailing assistant
        // turns dropped (a trailing assistant message is "continue this message", never forwarded).
        List<JsonNode> variants = new ArrayList<>();
        for (JsonNode conversation : conversations) {
            com.fasterxml.jackson.databind.node.ArrayNode messages = conversation.get("messages").deepCopy();
            while (messages.size() > 1 && messages.get(messages.size() - 1).path("role").asText().equals("assistant")) {
                messages.remove(messages.size() - 1);
            }
            ObjectNode variant = JSON.createObjectNode();
            variant.put("kind", conversation.get("kind").asText() + "/next-turn");
            variant.set("messages", messages);
            variants.add(variant);
        }
        conversations.addAll(variants);
        int forwarded = 0;
        for (JsonNode conversation : conversations) {
            ObjectNode body = JSON.createObjectNode();
            body.set("messages", conversation.get("messages"));
            body.put("max_tokens", 1);
            ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), body.toString());
            assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
            JsonNode atWorker = lastBodyAtWorker(fleet);
            assertThat(atWorker.has("messages")).isTrue();
            if (atWorker.has("input_ids")) {
                forwarded++;
                assertThat(ids(atWorker.get("input_ids"))).as(conversation.get("kind").asText()).containsExactly(engineIds(body));
                JsonNode usage = JSON.readTree(response.getContentAsString()).path("usage");
                assertThat(usage.path("prompt_tokens").asInt()).isEqualTo(atWorker.get("input_ids").size());
            }
        }
        // trailing-assistant and similar conversations are blocked by the guard; most are forwarded
        assertThat(forwarded).isGreaterThanOrEqualTo(200);
    }

    @Test
    void guard_blocksForwardingForToolsMultimodalAndCallerIds() throws Exception {
        String user = "{\"role\":\"user\",\"content\":\"What is the weather?\"}";
        assertForwarded("{\"messages\":[" + user + "]}", true);
        assertForwarded("{\"messages\":[" + user + "],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"w\"}}]}", false);
        assertForwarded("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}", false);
        assertForwarded("{\"messages\":[" + user + "],\"chat_template_kwargs\":{\"enable_thinking\":false}}", false);
        assertForwarded("{\"messages\":[" + user + "],\"input_ids\":[1,2,3]}", false);
        assertForwarded("{\"messages\":[" + user + ",{\"role\":\"assistant\",\"content\":\"It is\"}]}", false);
        String scrape = http.get(fleet.url("/metrics")).getContentAsString();
        assertThat(scrape).contains("kvroute_input_ids_forwarding_total{model_id=").contains("outcome=\"forwarded\"}")
                .contains("outcome=\"ineligible_tools\"").contains("outcome=\"ineligible_multimodal\"")
                .contains("outcome=\"ineligible_input_ids\"").contains("outcome=\"ineligible_trailing_assistant\"")
                .contains("outcome=\"ineligible_template_override\"")
                .contains("kvroute_ingress_tokenize_duration_seconds_count");
    }

    private static void assertForwarded(String body, boolean expected) throws Exception {
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), body);
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        JsonNode atWorker = lastBodyAtWorker(fleet);
        boolean callerIds = body.contains("\"input_ids\"");
        if (callerIds) {
            assertThat(ids(atWorker.get("input_ids"))).containsExactly(1, 2, 3);
        } else {
            assertThat(atWorker.has("input_ids")).as(body).isEqualTo(expected);
        }
    }

    @Test
    void disabledForwarding_stillRoutesButSendsNoIds() throws Exception {
        ContentResponse response = http.postJson(disabled.url("/v1/chat/completions"),
                "{\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],\"max_tokens\":2}");
        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(lastBodyAtWorker(disabled).has("input_ids")).isFalse();
        assertThat(http.get(disabled.url("/metrics")).getContentAsString()).contains("outcome=\"disabled\"");
    }

    @Test
    void longPrompt_isForwardedWithoutTruncation() throws Exception {
        StringBuilder text = new StringBuilder();
        for (int i = 0; text.length() < 600_000; i++) {
            text.append("token").append(i % 997).append(' ').append((char) ('a' + i % 26)).append(". ");
        }
        ObjectNode body = JSON.createObjectNode();
        body.putArray("messages").addObject().put("role", "user").put("content", text.toString());
        body.put("max_tokens", 1);
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), body.toString());
        assertThat(response.getStatus()).isEqualTo(200);
        JsonNode atWorker = lastBodyAtWorker(fleet);
        int[] expected = engineIds(body);
        assertThat(expected.length).isGreaterThan(100_000);
        assertThat(atWorker.get("input_ids").size()).isEqualTo(expected.length);
        assertThat(ids(atWorker.get("input_ids"))).containsExactly(expected);
    }

    private static double forwardingCount(String outcome) throws Exception {
        // summed over model_id: "default" until the fleet has learned its one model id, then that id
        double count = 0;
        for (String line : http.get(fleet.url("/metrics")).getContentAsString().split("\n")) {
            if (line.startsWith("kvroute_input_ids_forwarding_total{") && line.contains("outcome=\"" + outcome + "\"}")) {
                count += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return count;
    }

    @Test
    void unpairedSurrogate_isA400NamingTheField() throws Exception {
        String body = "{\"messages\":[{\"role\":\"system\",\"content\":\"fine\"},"
                + "{\"role\":\"user\",\"content\":\"emoji \uD83D\uDE00 and lone \\ud800\"}],\"max_tokens\":1}";
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), body);
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(400);
        assertThat(response.getContentAsString()).contains("messages[1].content").contains("surrogate");
        // a well-formed pair (the emoji) is fine and forwarded
        assertForwarded("{\"messages\":[{\"role\":\"user\",\"content\":\"emoji \\ud83d\\ude00 ok\"}]}", true);
    }

    @Test
    void addGenerationPrompt_otherThanTrue_isNeverForwarded_andANonBooleanIsA400() throws Exception {
        String user = "{\"role\":\"user\",\"content\":\"What is the weather?\"}";
        assertForwarded("{\"messages\":[" + user + "],\"add_generation_prompt\":true}", true);
        assertForwarded("{\"messages\":[" + user + "],\"add_generation_prompt\":false}", false);
        assertForwarded("{\"messages\":[" + user + "],\"add_generation_prompt\":null}", true);
        ContentResponse bad = http.postJson(fleet.url("/v1/chat/completions"), "{\"messages\":[" + user + "],\"add_generation_prompt\":\"no\"}");
        assertThat(bad.getStatus()).as(bad.getContentAsString()).isEqualTo(400);
        assertThat(bad.getContentAsString()).contains("add_generation_prompt");
    }

    @Test
    void multimodalChatWithCallerIds_isCountedMultimodal() throws Exception {
        double before = forwardingCount("ineligible_multimodal");
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"),
                "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}],\"input_ids\":[1,2,3]}");
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        String forwardingLines = java.util.Arrays.stream(http.get(fleet.url("/metrics")).getContentAsString().split("\n"))
                .filter(l -> l.startsWith("kvroute_input_ids_forwarding_total")).collect(java.util.stream.Collectors.joining("\n"));
        assertThat(forwardingCount("ineligible_multimodal")).as(forwardingLines).isEqualTo(before + 1);
    }

    @Test
    void nullInputIds_isAbsent_andTheRoutersIdsAreForwarded() throws Exception {
        ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"),
                "{\"messages\":[{\"role\":\"user\",\"content\":\"null ids\"}],\"input_ids\":null,\"max_tokens\":1}");
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        JsonNode atWorker = lastBodyAtWorker(fleet);
        assertThat(atWorker.path("input_ids").isArray()).isTrue();
        assertThat(ids(atWorker.get("input_ids"))).containsExactly(engineIds(atWorker));
    }

    /**
     * Parity against ids computed with none of the router's code: the reference file's chats were
     * rendered by Python jinja2 with Qwen3's own template ({@code rendered}); those rendered with the
     * defaults a forwarded request gets (generation prompt on, thinking on) are encoded here with
     * DJL's HuggingFaceTokenizer directly, and the forwarded ids must equal them.
     */
    @Test
    void parity_forwardedIdsEqualTheJinja2RenderingEncodedByDjlDirectly() throws Exception {
        int compared = 0;
        try (ai.djl.huggingface.tokenizers.HuggingFaceTokenizer hf = ai.djl.huggingface.tokenizers.HuggingFaceTokenizer.builder()
                .optTokenizerPath(BundledTokenizer.qwen3()).optAddSpecialTokens(false).optTruncation(false).optPadding(false).build();
                BufferedReader reader = new BufferedReader(new InputStreamReader(
                        TokenizationE2ETest.class.getResourceAsStream("/chatml/qwen3_reference.jsonl"), StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                JsonNode reference = JSON.readTree(line);
                if (!reference.path("add_generation_prompt").asBoolean() || !reference.path("enable_thinking").asBoolean()) {
                    continue;
                }
                ObjectNode body = JSON.createObjectNode();
                body.set("messages", reference.get("messages"));
                body.put("max_tokens", 1);
                ContentResponse response = http.postJson(fleet.url("/v1/chat/completions"), body.toString());
                assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
                JsonNode atWorker = lastBodyAtWorker(fleet);
                if (!atWorker.has("input_ids")) {
                    continue; // blocked by the guard (tools, trailing assistant, ...)
                }
                long[] expected = hf.encode(reference.get("rendered").asText()).getIds();
                int[] forwarded = ids(atWorker.get("input_ids"));
                assertThat(java.util.Arrays.stream(forwarded).asLongStream().toArray())
                        .as(reference.path("kind").asText()).containsExactly(expected);
                compared++;
            }
        }
        assertThat(compared).as("forwarded reference chats compared").isGreaterThanOrEqualTo(40);
    }
}
