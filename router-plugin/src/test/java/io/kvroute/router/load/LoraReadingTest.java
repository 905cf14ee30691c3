package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LoraReadingTest {

    private static LoraReading read(String exposition) throws Exception {
        return LoraReading.of(PrometheusTextParser.parse(exposition, LoraReading.FAMILIES));
    }

    @Test
    void vllm_theSeriesWithTheLargestTimestampWins() throws Exception {
        // vLLM keeps one series per label combination; the value is the time of its last update
        LoraReading r = read("""
                # HELP vllm:lora_requests_info Running stats on lora requests.
                # TYPE vllm:lora_requests_info gauge
                vllm:lora_requests_info{max_lora="4",running_lora_adapters="old",waiting_lora_adapters=""} 1.7e+09
                vllm:lora_requests_info{max_lora="4",running_lora_adapters="sql, chat ,",waiting_lora_adapters="math"} 1.789095808837885e+09
                vllm:lora_requests_info{max_lora="4",running_lora_adapters="older",waiting_lora_adapters=""} 1.6e+09
                """);
        assertThat(r.running()).containsExactlyInAnyOrder("sql", "chat");
        assertThat(r.waiting()).containsExactly("math");
        assertThat(r.maxLoras()).isEqualTo(4);
        assertThat(r.slotsUsed()).isEqualTo(-1);
    }

    @Test
    void vllm_rustFrontendWithoutMaxLora_leavesTheSlotCountUnknown() throws Exception {
        LoraReading r = read("vllm:lora_requests_info{running_lora_adapters=\"a,b\",waiting_lora_adapters=\"c\"} 5\n");
        assertThat(r.running()).containsExactlyInAnyOrder("a", "b");
        assertThat(r.maxLoras()).isZero();
    }

    @Test
    void sglang_slotCountsOnly_maxOverTensorParallelRanks() throws Exception {
        LoraReading r = read("""
                sglang:lora_pool_slots_used{model_name="m",tp_rank="0"} 3
                sglang:lora_pool_slots_used{model_name="m",tp_rank="1"} 3
                sglang:lora_pool_slots_total{model_name="m",tp_rank="0"} 8
                sglang:lora_pool_slots_total{model_name="m",tp_rank="1"} 8
                """);
        assertThat(r).isEqualTo(new LoraReading(Set.of(), Set.of(), 8, 3));
    }

    @Test
    void noLoraFamily_isNull_notAnEmptyFleet() throws Exception {
        assertThat(read("vllm:num_requests_waiting{engine=\"0\"} 1\n")).isNull();
        assertThat(LoraReading.of(Map.of(LoraReading.VLLM_INFO, List.of()))).isNull();
    }

    @Test
    void absurdSlotCountsAreBounded() throws Exception {
        LoraReading r = read("vllm:lora_requests_info{max_lora=\"99999999999\",running_lora_adapters=\"\",waiting_lora_adapters=\"\"} 1\n");
        assertThat(r.maxLoras()).isEqualTo(LoraReading.MAX_SLOTS);
        assertThat(read("vllm:lora_requests_info{max_lora=\"None\",running_lora_adapters=\"\",waiting_lora_adapters=\"\"} 1\n")
                .maxLoras()).isZero();
    }
}
