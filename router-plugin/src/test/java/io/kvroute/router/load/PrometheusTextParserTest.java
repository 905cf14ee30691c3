package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
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
        byte[] b = "m 1\nm 2\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertThat(PrometheusTextParser.parse(b, 4, Set.of("m")).get("m")).hasSize(1);
    }
}
