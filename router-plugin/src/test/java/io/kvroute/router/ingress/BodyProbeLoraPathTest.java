package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** SGLang names an adapter of the base model with {@code lora_path}; the probe reads one name, never fails on a list. */
class BodyProbeLoraPathTest {

    private static BodyProbe probe(String json) throws Exception {
        return BodyProbe.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void loraPathString_namesTheAdapter_andTheModelStaysTheBase() throws Exception {
        BodyProbe p = probe("{\"model\":\"base\",\"lora_path\":\"sql-v3\",\"prompt\":\"hi\"}");
        assertThat(p.model).isEqualTo("base");
        assertThat(p.loraPath).isEqualTo("sql-v3");
    }

    @Test
    void loraPathNullAbsentOrBatchList_namesNoAdapter() throws Exception {
        assertThat(probe("{\"model\":\"base\",\"prompt\":\"hi\"}").loraPath).isNull();
        assertThat(probe("{\"model\":\"base\",\"lora_path\":null,\"prompt\":\"hi\"}").loraPath).isNull();
        BodyProbe list = probe("{\"model\":\"base\",\"lora_path\":[\"a\",null],\"prompt\":[\"x\",\"y\"],\"stream\":true}");
        assertThat(list.loraPath).isNull();
        assertThat(list.stream).isTrue(); // the list was skipped whole: later fields are still read
    }
}
