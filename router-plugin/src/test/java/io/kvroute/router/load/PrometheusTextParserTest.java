package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PrometheusTextParserTest {

    static byte[] fixture(String name) throws IOException {
        try (InputStream in = PrometheusTextParserTest.class.getResourceAsStream("/metrics/" + name)) {
            return in.readAllBytes();
        }
    }

    @Test
    void parse_vllmExposition_keepsOnlyWantedSeriesWithTheirLabels() throws Exception {
        byte[] text = fixture("vllm-dp2.prom");
        Map<String, List<PrometheusTextParser.Sample>> out = PrometheusTextParser.parse(text, text.length,
                Set.of("vllm:num_requests_waiting", "vllm:cache_config_info"));

        assertThat(out).containsOnlyKeys("vllm:num_requests_waiting", "vllm:cache_config_info");
        assertThat(out.get("vllm:num_requests_waiting")).extracting(s -> s.labels().get("engine"), s -> s.value())
                .containsExactly(org.assertj.core.groups.Tuple.tuple("0", 12.0), org.assertj.core.groups.Tuple.tuple("1", 0.0));
        assertThat(out.get("vllm:cache_config_info").get(1).labels())
                .containsEntry("block_size", "16").containsEntry("num_gpu_blocks", "2048").containsEntry("engine", "1")
                .hasSize(14);
    }

    @Test
    void parse_nameThatOnlySharesAPrefix_isNotTaken() throws Exception {
        // vllm:num_requests_waiting_by_reason starts with vllm:num_requests_waiting
        Map<String, List<PrometheusTextParser.Sample>> out = PrometheusTextParser.parse(
                "vllm:num_requests_waiting_by_reason{reason=\"capacity\"} 9\nvllm:num_requests_waiting 2\n",
                Set.of("vllm:num_requests_waiting"));
        assertThat(out.get("vllm:num_requests_waiting")).extracting(PrometheusTextParser.Sample::value).containsExactly(2.0);
    }

    @Test
    void parse_escapesSpecialValuesTimestampsAndCrlf() throws Exception {
        Map<String, List<PrometheusTextParser.Sample>> out = PrometheusTextParser.parse(
                "m{a=\"x\\\"y\\\\z\\n\",b=\"\"} +Inf 1712345678000\r\nm -Inf\nm NaN\nm{} 1.5e+03\n",
                Set.of("m"));
        List<PrometheusTextParser.Sample> m = out.get("m");
        assertThat(m.get(0).labels()).containsEntry("a", "x\"y\\z\n").containsEntry("b", "");
        assertThat(m.get(0).value()).isInfinite().isPositive();
        assertThat(m.get(1).value()).isInfinite().isNegative();
        assertThat(m.get(2).value()).isNaN();
        assertThat(m.get(3).value()).isEqualTo(1500.0);
    }

    @Test
    void parse_brokenWantedLine_failsNamingTheLine() {
        assertThatThrownBy(() -> PrometheusTextParser.parse("# TYPE m gauge\nm{a=\"1} 3\n", Set.of("m")))
                .isInstanceOf(PrometheusTextParser.Malformed.class).hasMessageContaining("line 2");
        assertThatThrownBy(() -> PrometheusTextParser.parse("m{a=\"1\"}\n", Set.of("m")))
                .hasMessageContaining("no value");
        assertThatThrownBy(() -> PrometheusTextParser.parse("m 0x10\n", Set.of("m")))
                .hasMessageContaining("not a number");
        assertThatThrownBy(() -> PrometheusTextParser.parse("m 1 2 3\n", Set.of("m")))
                .hasMessageContaining("trailing");
        assertThatThrownBy(() -> PrometheusTextParser.parse("m{a=\"1\",a=\"2\"} 1\n", Set.of("m")))
                .hasMessageContaining("repeated");
        assertThatThrownBy(() -> PrometheusTextParser.parse("m{a=\"\\t\"} 1\n", Set.of("m")))
                .hasMessageContaining("bad escape");
    }

    @Test
    void parse_badTypeLineOrBadName_failsEvenForUnwantedMetrics() {
        assertThatThrownBy(() -> PrometheusTextParser.parse("# TYPE other gaugee\n", Set.of("m")))
                .hasMessageContaining("unknown metric type");
        assertThatThrownBy(() -> PrometheusTextParser.parse("<html>oops</html>\n", Set.of("m")))
                .hasMessageContaining("metric name");
    }

    @Test
    void parse_respectsLength() throws Exception {
        byte[] b = "m 1\nm 2\n".getBytes(StandardCharsets.US_ASCII);
        assertThat(PrometheusTextParser.parse(b, 4, Set.of("m")).get("m")).hasSize(1);
    }

    /** Whole-body parse as the model; the stream must agree wherever the HTTP client cuts the body. */
    @Test
    void stream_cutsOfARealExposition_parseAsTheWholeBody() throws Exception {
        byte[] lf = fixture("vllm-dp2.prom");
        byte[] crlf = new String(lf, StandardCharsets.UTF_8).replace("\n", "\r\n").getBytes(StandardCharsets.UTF_8);
        for (byte[] text : List.of(lf, crlf)) {
            Map<String, List<PrometheusTextParser.Sample>> whole = PrometheusTextParser.parse(text, text.length, WANTED);
            assertThat(whole).containsKeys("vllm:num_requests_waiting", "vllm:cache_config_info");
            for (int cut = 0; cut <= text.length; cut++) {
                if (cut % 11 != 0 && !nearANewline(text, cut)) {
                    continue; // every cut next to a line end, where carrying matters, and a stride elsewhere
                }
                PrometheusTextParser.Stream stream = new PrometheusTextParser.Stream(new PrometheusTextParser.Wanted(WANTED));
                stream.feed(ByteBuffer.wrap(text, 0, cut));
                stream.feed(ByteBuffer.wrap(text, cut, text.length - cut));
                assertThat(stream.finish()).as("cut at %d", cut).isEqualTo(whole);
            }
        }
    }

    @Test
    void stream_randomChunksInDirectBuffers_parseAsTheWholeBody_andLeaveTheChunksAlone() throws Exception {
        byte[] text = fixture("vllm-dp2.prom");
        Map<String, List<PrometheusTextParser.Sample>> whole = PrometheusTextParser.parse(text, text.length, WANTED);
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            PrometheusTextParser.Stream stream = new PrometheusTextParser.Stream(new PrometheusTextParser.Wanted(WANTED));
            int pos = 0;
            while (pos < text.length) {
                int n = Math.min(text.length - pos, 1 + random.nextInt(round % 2 == 0 ? 8 : 400));
                ByteBuffer chunk = ByteBuffer.allocateDirect(n + 6);
                chunk.position(3);
                chunk.put(text, pos, n);
                chunk.flip().position(3);
                stream.feed(chunk);
                assertThat(chunk.position()).isEqualTo(3);
                assertThat(chunk.limit()).isEqualTo(n + 3);
                pos += n;
            }
            assertThat(stream.finish()).as("round %d", round).isEqualTo(whole);
        }
    }

    @Test
    void stream_aLastLineWithoutNewline_isParsed_andAnOverlongLineIsMalformedAcrossChunks() throws Exception {
        PrometheusTextParser.Stream stream = new PrometheusTextParser.Stream(new PrometheusTextParser.Wanted(Set.of("m")));
        stream.feed(ByteBuffer.wrap("m 1\nm".getBytes(StandardCharsets.US_ASCII)));
        stream.feed(ByteBuffer.wrap(" 2".getBytes(StandardCharsets.US_ASCII)));
        assertThat(stream.finish().get("m")).extracting(PrometheusTextParser.Sample::value).containsExactly(1.0, 2.0);

        PrometheusTextParser.Stream endless = new PrometheusTextParser.Stream(new PrometheusTextParser.Wanted(Set.of("m")));
        byte[] piece = new byte[4096];
        java.util.Arrays.fill(piece, (byte) 'x');
        assertThatThrownBy(() -> {
            for (int i = 0; i <= PrometheusTextParser.MAX_LINE_BYTES / piece.length; i++) {
                endless.feed(ByteBuffer.wrap(piece));
            }
        }).isInstanceOf(PrometheusTextParser.Malformed.class).hasMessageContaining("line 1").hasMessageContaining("longer");
    }

    /** The word-at-a-time newline search against a byte-by-byte model: random bytes, both byte orders, heap and direct. */
    @Test
    void indexOfNewline_matchesAByteByByteSearch() {
        Random random = new Random(11);
        byte[] alphabet = {'\n', 'a', ' ', (byte) 0x8A, (byte) 0x0B, (byte) 0x09, (byte) 0xFF, 0};
        for (int round = 0; round < 5_000; round++) {
            byte[] bytes = new byte[random.nextInt(40)];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = random.nextInt(6) == 0 ? alphabet[random.nextInt(alphabet.length)] : (byte) random.nextInt(256);
            }
            int from = bytes.length == 0 ? 0 : random.nextInt(bytes.length);
            int to = from + random.nextInt(bytes.length - from + 1);
            int expected = -1;
            for (int i = from; i < to; i++) {
                if (bytes[i] == '\n') {
                    expected = i;
                    break;
                }
            }
            ByteBuffer heap = ByteBuffer.wrap(bytes);
            ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
            for (ByteBuffer b : List.of(heap, direct)) {
                b.order(random.nextBoolean() ? java.nio.ByteOrder.BIG_ENDIAN : java.nio.ByteOrder.LITTLE_ENDIAN);
                assertThat(PrometheusTextParser.Stream.indexOfNewline(b, from, to))
                        .as("round %d, %s, [%d, %d)", round, b.order(), from, to).isEqualTo(expected);
            }
        }
    }

    private static boolean nearANewline(byte[] text, int cut) {
        for (int i = Math.max(0, cut - 2); i < Math.min(text.length, cut + 2); i++) {
            if (text[i] == '\n') {
                return true;
            }
        }
        return false;
    }

    private static final Set<String> WANTED = Set.of("vllm:num_requests_waiting", "vllm:num_requests_running",
            "vllm:kv_cache_usage_perc", "vllm:cache_config_info");
}
