package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PdOutputTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void malformedWholeBodies_areIOExceptions_neverAnotherException() {
        String[][] cases = {
            {"CHAT", "[1,2]"}, {"CHAT", "not json"}, {"CHAT", "{\"choices\":\"x\"}"}, {"CHAT", "{\"choices\":[]}"},
            {"CHAT", "{\"choices\":[{\"message\":\"text\"}]}"}, {"COMPLETIONS", "{\"choices\":[7]}"},
            {"GENERATE", "{\"text\":\"x\",\"meta_info\":\"bad\"}"}, {"GENERATE", "5"},
        };
        for (String[] c : cases) {
            PdOutput output = new PdOutput(ApiKind.valueOf(c[0]), false);
            output.beginSegment();
            assertThatThrownBy(() -> output.onWholeBody(bytes(c[1]))).as(c[1]).isInstanceOf(IOException.class);
        }
    }

    @Test
    void wholeBodies_acrossTwoSegments_concatenateTextAndSumUsage() throws Exception {
        PdOutput output = new PdOutput(ApiKind.CHAT, false);
        output.beginSegment();
        assertThat(output.onWholeBody(bytes("{\"choices\":[{\"message\":{\"content\":\"Hello \"}}],"
                + "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2},\"kvroute_capacity_marker\":true}"))).isNull();
        output.endSegment();
        assertThat(output.generatedText()).isEqualTo("Hello ");
        output.beginSegment();
        byte[] last = output.onWholeBody(bytes("{\"choices\":[{\"message\":{\"content\":\"world\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":1}}"));
        JsonNode body = JSON.readTree(last);
        assertThat(body.path("choices").get(0).path("message").path("content").asText()).isEqualTo("Hello world");
        assertThat(body.path("usage").path("completion_tokens").asInt()).isEqualTo(3);
        assertThat(body.path("usage").path("prompt_tokens").asInt()).isEqualTo(10);
        assertThat(body.has("kvroute_capacity_marker")).isFalse();
    }

    @Test
    void stream_hidesTheMarkerEventAndIntermediateDone_andSumsUsageAtTheEnd() throws Exception {
        PdOutput output = new PdOutput(ApiKind.COMPLETIONS, true);
        output.beginSegment();
        // an event split across two chunks, then the marked finish, a usage chunk and [DONE]
        String first = "data: {\"choices\":[{\"text\":\"ab\"}]}\n\ndata: {\"choi";
        String rest = "ces\":[{\"text\":\"c\",\"finish_reason\":\"length\"}],\"kvroute_capacity_marker\":true}\n\n"
                + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";
        String seen = new String(output.onStreamBytes(bytes(first)), StandardCharsets.UTF_8)
                + new String(output.onStreamBytes(bytes(rest)), StandardCharsets.UTF_8);
        assertThat(seen).contains("\"ab\"").doesNotContain("kvroute_capacity_marker").doesNotContain("[DONE]").doesNotContain("usage");
        assertThat(output.segmentEndedForCapacity()).isTrue();
        output.endSegment();
        output.beginSegment();
        String second = new String(output.onStreamBytes(bytes("data: {\"choices\":[{\"text\":\"d\",\"finish_reason\":\"stop\"}]}\n\n"
                + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")), StandardCharsets.UTF_8);
        assertThat(second).contains("\"d\"");
        assertThat(output.segmentEndedForCapacity()).isFalse();
        output.endSegment();
        assertThat(output.generatedText()).isEqualTo("abcd");
        String trailer = new String(output.streamTrailer("m"), StandardCharsets.UTF_8);
        assertThat(trailer).endsWith("data: [DONE]\n\n");
        JsonNode usage = JSON.readTree(trailer.substring(6, trailer.indexOf("\n\n"))).path("usage");
        assertThat(usage.path("completion_tokens").asInt()).isEqualTo(3);
        assertThat(usage.path("prompt_tokens").asInt()).isEqualTo(4);
    }

    @Test
    void anErrorEvent_endsContinuation() {
        PdOutput output = new PdOutput(ApiKind.CHAT, false);
        output.beginSegment();
        output.onStreamBytes(bytes("data: {\"error\":{\"message\":\"boom\"},\"kvroute_capacity_marker\":true}\n\n"));
        assertThat(output.segmentEndedForCapacity()).isFalse();
    }
}
