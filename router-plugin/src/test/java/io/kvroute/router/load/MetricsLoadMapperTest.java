package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MetricsLoadMapperTest {

    private static MetricsLoadMapper.Reading read(String fixture, EngineMetricNames names) throws Exception {
        byte[] text = PrometheusTextParserTest.fixture(fixture);
        return MetricsLoadMapper.map(PrometheusTextParser.parse(text, text.length, names.wanted()), names, 42);
    }

    private static MetricsLoadMapper.Reading readText(String text, EngineMetricNames names) throws Exception {
        return MetricsLoadMapper.map(PrometheusTextParser.parse(text, names.wanted()), names, 1);
    }

    @Test
    void vllm_oneReportPerEngineLabel_withCapacityFromCacheConfigInfo() throws Exception {
        MetricsLoadMapper.Reading r = read("vllm-dp2.prom", EngineMetricNames.VLLM);

        assertThat(r.rankLabels()).containsExactly("0", "1");
        assertThat(r.blockSize()).isEqualTo(16);
        LoadReport rank0 = r.ranks().get(0);
        assertThat(rank0.numWaitingReqs()).isEqualTo(12);
        assertThat(rank0.numRunningReqs()).isEqualTo(7);
        assertThat(rank0.maxTotalNumTokens()).isEqualTo(16L * 2048);
        assertThat(rank0.numTokens()).isEqualTo(Math.round(0.8125 * 16 * 2048));
        assertThat(rank0.seq()).isEqualTo(42);
        assertThat(rank0.hasExtension()).isFalse();
        LoadReport rank1 = r.ranks().get(1);
        assertThat(rank1.attnDpRank()).isEqualTo(1);
        assertThat(rank1.numWaitingReqs()).isZero();
        assertThat(rank1.numRunningReqs()).isEqualTo(2);
        assertThat(rank1.numTokens()).isEqualTo(Math.round(0.0625 * 16 * 2048));
    }

    @Test
    void sglang_singleProcess_isRankZeroWithCapacityGauge() throws Exception {
        MetricsLoadMapper.Reading r = read("sglang.prom", EngineMetricNames.SGLANG);

        assertThat(r.ranks()).hasSize(1);
        LoadReport l = r.ranks().get(0);
        assertThat(l.numWaitingReqs()).isEqualTo(3);
        assertThat(l.numRunningReqs()).isEqualTo(5);
        assertThat(l.maxTotalNumTokens()).isEqualTo(200_000);
        assertThat(l.numTokens()).isEqualTo(50_000);
    }

    @Test
    void trtllm_withoutCapacity_reportsUnknownCapacity() throws Exception {
        MetricsLoadMapper.Reading r = read("trtllm.prom", EngineMetricNames.TRTLLM);

        LoadReport l = r.ranks().get(0);
        assertThat(l.numWaitingReqs()).isEqualTo(9);
        assertThat(l.numRunningReqs()).isEqualTo(4);
        assertThat(l.maxTotalNumTokens()).isZero();
        assertThat(l.numTokens()).isZero();
    }

    @Test
    void ranksOrderNumerically_andAnExternalLbRankIsIndexZero() throws Exception {
        EngineMetricNames v = EngineMetricNames.VLLM;
        MetricsLoadMapper.Reading r = readText("""
                vllm:num_requests_waiting{engine="10"} 1
                vllm:num_requests_waiting{engine="2"} 2
                vllm:num_requests_running{engine="10"} 0
                vllm:num_requests_running{engine="2"} 0
                """, v);
        assertThat(r.rankLabels()).containsExactly("2", "10");
        assertThat(r.ranks()).extracting(LoadReport::numWaitingReqs).containsExactly(2, 1);

        MetricsLoadMapper.Reading single = readText("""
                vllm:num_requests_waiting{engine="3",model_name="m"} 4
                vllm:num_requests_running{engine="3",model_name="m"} 1
                """, v);
        assertThat(single.ranks()).singleElement().extracting(LoadReport::attnDpRank).isEqualTo(0);
    }

    @Test
    void seriesOfOneRankWithOtherLabels_areSummed() throws Exception {
        MetricsLoadMapper.Reading r = readText("""
                vllm:num_requests_waiting{engine="0",model_name="a"} 1
                vllm:num_requests_waiting{engine="0",model_name="b"} 2
                vllm:num_requests_running{engine="0",model_name="a"} 3
                """, EngineMetricNames.VLLM);
        assertThat(r.ranks().get(0).numWaitingReqs()).isEqualTo(3);
    }

    @Test
    void aRankMissingItsQueueGauge_isRefused() {
        assertThatThrownBy(() -> readText("""
                vllm:num_requests_waiting{engine="0"} 1
                vllm:num_requests_running{engine="0"} 1
                vllm:num_requests_running{engine="1"} 1
                """, EngineMetricNames.VLLM))
                .isInstanceOf(MetricsLoadMapper.Refused.class)
                .satisfies(e -> assertThat(((MetricsLoadMapper.Refused) e).reason).isEqualTo("missing_metric"))
                .hasMessageContaining("rank '1' lacks vllm:num_requests_waiting");
        assertThatThrownBy(() -> readText("process_resident_memory_bytes 1\n", EngineMetricNames.VLLM))
                .isInstanceOf(MetricsLoadMapper.Refused.class);
    }

    @Test
    void negativeOrNanGauge_isRefused() {
        assertThatThrownBy(() -> readText("""
                vllm:num_requests_waiting -1
                vllm:num_requests_running 1
                """, EngineMetricNames.VLLM))
                .satisfies(e -> assertThat(((MetricsLoadMapper.Refused) e).reason).isEqualTo("bad_value"));
        assertThatThrownBy(() -> readText("""
                vllm:num_requests_waiting NaN
                vllm:num_requests_running 1
                """, EngineMetricNames.VLLM)).isInstanceOf(MetricsLoadMapper.Refused.class);
    }

    @Test
    void overriddenNames_readAForksMetrics() throws Exception {
        EngineMetricNames fork = EngineMetricNames.VLLM.withWaiting("myfork:queue").withRunning("myfork:running");
        MetricsLoadMapper.Reading r = readText("myfork:queue{engine=\"0\"} 8\nmyfork:running{engine=\"0\"} 1\n", fork);
        assertThat(r.ranks().get(0).numWaitingReqs()).isEqualTo(8);
    }
}
