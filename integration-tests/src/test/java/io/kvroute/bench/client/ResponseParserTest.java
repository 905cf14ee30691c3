package io.kvroute.bench.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ResponseParserTest {

    private static final String STREAM = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
            + "data: {\"choices\":[{\"delta\":{\"content\":\"é1\"}}]}\r\n\r\n"
            + ": keep-alive comment\n\n"
            + "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n"
            + "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"c\"}}]}\n\n"
            + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":3,"
            + "\"prompt_tokens_details\":{\"cached_tokens\":16}}}\n\n"
            + "data: [DONE]\n\n";

    @Test
    void sse_splitAtEveryByte_givesSameResultAsOneChunk() {
        byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
        ResponseParser whole = new ResponseParser(new ObjectMapper(), true);
        whole.onContent(ByteBuffer.wrap(bytes), 5);
        whole.onEnd(9);
        ResponseParser split = new ResponseParser(new ObjectMapper(), true);
        for (int i = 0; i < bytes.length; i++) {
            split.onContent(ByteBuffer.wrap(bytes, i, 1), 10 + i);
        }
        split.onEnd(10_000);

        for (ResponseParser p : new ResponseParser[] {whole, split}) {
            assertThat(p.error()).isNull();
            assertThat(p.outputTokens()).isEqualTo(3);
            assertThat(p.promptTokens()).isEqualTo(40);
            assertThat(p.cachedTokens()).isEqualTo(16);
        }
        assertThat(split.firstTokenNanos()).isLessThan(split.lastTokenNanos());
        assertThat(whole.firstTokenNanos()).isEqualTo(5);
    }

    /** SGLang /generate: a token per event with output_ids, prompt and cached tokens in the last meta_info. */
    @Test
    void generateStream_timesTokensByOutputIds_andReadsMetaInfo() {
        ResponseParser p = new ResponseParser(new ObjectMapper(), true);
        p.onContent(ByteBuffer.wrap(("data: {\"text\":\"a\",\"output_ids\":[7],\"meta_info\":{\"completion_tokens\":1}}\n\n"
                + "data: {\"text\":\"ab\",\"output_ids\":[8],\"meta_info\":{\"completion_tokens\":2}}\n\n")
                .getBytes(StandardCharsets.UTF_8)), 3);
        p.onContent(ByteBuffer.wrap(("data: {\"text\":\"ab\",\"output_ids\":[],\"meta_info\":{\"prompt_tokens\":1024,"
                + "\"completion_tokens\":2,\"cached_tokens\":512}}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8)), 8);
        p.onEnd(9);

        assertThat(p.error()).isNull();
        assertThat(p.firstTokenNanos()).isEqualTo(3);
        assertThat(p.lastTokenNanos()).isEqualTo(3);
        assertThat(p.outputTokens()).isEqualTo(2);
        assertThat(p.promptTokens()).isEqualTo(1024);
        assertThat(p.cachedTokens()).isEqualTo(512);
    }

    @Test
    void sse_withoutUsage_countsContentChunks() {
        ResponseParser p = new ResponseParser(new ObjectMapper(), true);
        p.onContent(ByteBuffer.wrap(("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8)), 1);
        p.onEnd(2);

        assertThat(p.outputTokens()).isEqualTo(2);
        assertThat(p.promptTokens()).isZero();
        assertThat(p.error()).isNull();
    }

    @Test
    void sse_endingWithoutDone_isAnError() {
        ResponseParser p = new ResponseParser(new ObjectMapper(), true);
        p.onContent(ByteBuffer.wrap("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n".getBytes(StandardCharsets.UTF_8)), 1);
        p.onEnd(2);

        assertThat(p.error()).contains("[DONE]");
    }

    @Test
    void sse_errorChunk_isAnError() {
        ResponseParser p = new ResponseParser(new ObjectMapper(), true);
        p.onContent(ByteBuffer.wrap("data: {\"error\":{\"message\":\"worker died\"}}\n\ndata: [DONE]\n\n"
                .getBytes(StandardCharsets.UTF_8)), 1);
        p.onEnd(2);

        assertThat(p.error()).contains("worker died");
    }
}
