package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link OutputTokenCounter} on the byte shapes engines stream (vLLM and SGLang
 * {@code entrypoints/openai/serving_chat.py}, SGLang {@code /generate}), each fed whole, split at every byte, and one
 * byte at a time: the count never depends on where the relay's buffers happen to break.
 */
class OutputTokenCounterTest {

    private static final String HEAD = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",";

    private static String chunk(String delta, String finishReason) {
        return "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":"
                + (finishReason == null ? "null" : "\"" + finishReason + "\"") + "}]}\n\n";
    }

    private static final String ROLE = chunk("{\"role\":\"assistant\",\"content\":\"\"}", null);
    private static final String FINISH = chunk("{}", "stop");
    private static final String DONE = "data: [DONE]\n\n";

    private static String content(String text) {
        return chunk("{\"content\":\"" + text + "\"}", null);
    }

    private static String usage(int completionTokens) {
        return "data: " + HEAD + "\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":" + (7 + completionTokens)
                + ",\"completion_tokens\":" + completionTokens + "}}\n\n";
    }

    /** Counts {@code body} fed whole, at every two-way split, and byte by byte; all must agree. */
    private static long count(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        long whole = feed(bytes, List.of(bytes.length));
        List<Integer> badCuts = new ArrayList<>();
        for (int cut = 1; cut < bytes.length; cut++) {
            if (feed(bytes, List.of(cut, bytes.length)) != whole) {
                badCuts.add(cut);
            }
        }
        assertThat(badCuts).as("splits that change the count of " + whole).isEmpty();
        OutputTokenCounter one = new OutputTokenCounter();
        long sum = 0;
        for (byte b : bytes) {
            sum += one.feed(ByteBuffer.wrap(new byte[] {b}));
        }
        assertThat(one.counted()).as("byte by byte").isEqualTo(whole);
        assertThat(sum).as("the changes add up to the count").isEqualTo(whole);
        return whole;
    }

    private static long feed(byte[] bytes, List<Integer> cuts) {
        OutputTokenCounter counter = new OutputTokenCounter();
        int from = 0;
        long sum = 0;
        for (int cut : cuts) {
            ByteBuffer slice = ByteBuffer.wrap(bytes, from, cut - from);
            int position = slice.position();
            sum += counter.feed(slice);
            if (slice.position() != position) {
                throw new AssertionError("feed moved the buffer's position");
            }
            from = cut;
        }
        return sum == counter.counted() ? sum : -1; // -1: the changes do not add up to the count

    }

    @Test
    void anOpenAiStream_countsTheChunksWithText_notTheRoleFinishOrDoneEvents() {
        assertThat(count(ROLE + content("Hel") + content("lo") + content(" there") + FINISH + DONE)).isEqualTo(3);
    }

    @Test
    void theFinalUsageChunk_settlesTheCount_upOrDown() {
        // a chunk may carry several tokens, and vLLM streams a token with no text as "content":"" (held back)
        String body = ROLE + content("Hel") + content("") + content("lo") + FINISH;
        assertThat(count(body + DONE)).isEqualTo(2);
        assertThat(count(body + usage(5) + DONE)).as("usage says 5: settled up").isEqualTo(5);
        assertThat(count(body + usage(1) + DONE)).as("usage says 1: settled down").isEqualTo(1);

        OutputTokenCounter counter = new OutputTokenCounter();
        counter.feed(utf8(body));
        assertThat(counter.feed(utf8(usage(1)))).as("a refund").isEqualTo(-1);
    }

    @Test
    void continuousUsageStats_areExactOnEveryChunk() {
        String withUsage = ",\"usage\":{\"prompt_tokens\":7,\"total_tokens\":0,\"completion_tokens\":";
        String body = "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]"
                + withUsage + "0}}\n\n"
                + "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"}}]" + withUsage + "2}}\n\n"
                + "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"}}]" + withUsage + "3}}\n\n"
                + "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]" + withUsage
                + "4}}\n\n" + usage(4) + DONE;
        assertThat(count(body)).isEqualTo(4);
    }

    @Test
    void tokenIds_areCountedEntryByEntry_andThePromptsAreNot() {
        String body = "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],"
                + "\"prompt_token_ids\":[1,2,3,4]}\n\n"
                + "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"},\"token_ids\":[7, 8]}]}\n\n"
                + "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"token_ids\":[9]}]}\n\n"
                + "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\",\"token_ids\":[]}]}\n\n"
                + DONE;
        assertThat(count(body)).isEqualTo(3);
    }

    @Test
    void sglangGenerateFrames_areCountedByTheirCumulativeCompletionTokens() {
        StringBuilder body = new StringBuilder();
        String text = "";
        for (int n = 1; n <= 4; n++) {
            text += "w" + n + " ";
            body.append("data: {\"text\":\"").append(text).append("\",\"output_ids\":[").append(100 + n)
                    .append("],\"meta_info\":{\"id\":\"r\",\"prompt_tokens\":3,\"completion_tokens\":").append(n)
                    .append(",\"finish_reason\":null}}\n\n");
        }
        body.append("data: {\"text\":\"").append(text).append("\",\"output_ids\":[],\"meta_info\":{\"id\":\"r\","
                + "\"prompt_tokens\":3,\"completion_tokens\":4,\"cached_tokens\":0,\"finish_reason\":{\"type\":\"length\","
                + "\"length\":4}}}\n\n").append(DONE);
        assertThat(count(body.toString())).isEqualTo(4);
    }

    @Test
    void completionsReasoningToolCallsAndLogprobs_countAsOutput() {
        String completions = "data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"logprobs\":null,\"finish_reason\":null}]}\n\n"
                + "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"length\"}]}\n\n" + DONE;
        assertThat(count(completions)).isEqualTo(1);
        String chat = chunk("{\"reasoning_content\":\"hm\"}", null)
                + chunk("{\"reasoning\":\"hm\"}", null)
                + chunk("{\"content\":null,\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\"\"}}]}", null)
                + chunk("{\"content\":null,\"tool_calls\":[]}", null)
                + "data: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":{\"content\":[{\"token\":\"x\","
                + "\"logprob\":-0.1}]}}]}\n\n"
                + chunk("{}", "tool_calls") + DONE;
        assertThat(count(chat)).isEqualTo(4);
    }

    @Test
    void errorsCommentsAndOtherFields_areNotTokens_andCrLfEndsEventsToo() {
        String body = ": keep-alive\n\n"
                + "event: ping\n\n"
                + "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":500}}\n\n"
                + content("a").replace("\n", "\r\n")
                + "id: 7\r\ndata: " + HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\r\n\r\n"
                + "data: [DONE]\r\n\r\n";
        assertThat(count(body)).isEqualTo(2);
    }

    @Test
    void generatedTextThatSpellsAKey_isNeverTakenForOne() {
        String tricky = "\\\"completion_tokens\\\": 99, \\\"choices\\\":[], \\\"content\\\":\\\"x\\\"";
        assertThat(count(content(tricky) + FINISH + DONE)).isEqualTo(1);
        String json = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"" + tricky + "\"}}],"
                + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\": 42,\"total_tokens\":45}}";
        assertThat(count(json)).isEqualTo(42);
    }

    @Test
    void aWholeJsonAnswer_isCountedByItsCompletionTokens() {
        assertThat(count("{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":42,\"total_tokens\":49}}"))
                .isEqualTo(42);
        assertThat(count("  \n{\"text\":\"hi\",\"meta_info\":{\"prompt_tokens\":3,\"completion_tokens\":5}}")).isEqualTo(5);
        assertThat(count("{\"error\":{\"message\":\"bad\",\"code\":400}}")).isZero();
    }

    @Test
    void anEventLargerThanTheCarry_isJudgedOnItsHead_andTheNextOnesStillCount() {
        String huge = "x".repeat(OutputTokenCounter.MAX_CARRIED_EVENT_BYTES + 10);
        byte[] big = content(huge).getBytes(StandardCharsets.UTF_8);
        OutputTokenCounter counter = new OutputTokenCounter();
        for (int from = 0; from < big.length; from += 4096) {
            counter.feed(ByteBuffer.wrap(big, from, Math.min(4096, big.length - from)));
        }
        counter.feed(utf8(content("y") + FINISH + DONE));
        assertThat(counter.counted()).isEqualTo(2);
    }

    private static ByteBuffer utf8(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }
}
