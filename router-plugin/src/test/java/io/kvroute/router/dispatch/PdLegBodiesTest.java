package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import org.junit.jupiter.api.Test;

/** Each PD leg's body by its engine: a vLLM leg without the router's input_ids, an SGLang leg with them. */
class PdLegBodiesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Worker SGLANG = Worker.regular("http://s:1").withEngine(EngineType.SGLANG);
    private static final Worker VLLM = Worker.regular("http://v:1").withEngine(EngineType.VLLM);
    private static final Worker UNTYPED = Worker.regular("http://u:1");

    private static ObjectNode segment() throws Exception {
        return (ObjectNode) JSON.readTree("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"input_ids\":[1,2],"
                + "\"bootstrap_host\":\"p\",\"bootstrap_port\":8998,\"bootstrap_room\":7}");
    }

    private static JsonNode read(byte[] body) throws Exception {
        return JSON.readTree(body);
    }

    @Test
    void vllmLegs_loseTheRoutersIds_keepTheRendezvous_sglangLegsKeepThem() throws Exception {
        PdLegBodies mixed = PdLegBodies.of(segment(), true, VLLM, SGLANG);
        assertThat(read(mixed.prefill()).has("input_ids")).isFalse();
        assertThat(read(mixed.prefill()).path("bootstrap_room").asInt()).isEqualTo(7);
        assertThat(read(mixed.decode()).path("input_ids").size()).isEqualTo(2);
        assertThat(mixed.legsWithoutIds()).isEqualTo(1);

        PdLegBodies both = PdLegBodies.of(segment(), true, VLLM, VLLM);
        assertThat(read(both.prefill()).has("input_ids")).isFalse();
        assertThat(read(both.decode()).has("input_ids")).isFalse();
        assertThat(both.legsWithoutIds()).isEqualTo(2);

        PdLegBodies decodeOnly = PdLegBodies.of(segment(), true, SGLANG, VLLM);
        assertThat(read(decodeOnly.prefill()).has("input_ids")).isTrue();
        assertThat(read(decodeOnly.decode()).has("input_ids")).isFalse();
        assertThat(decodeOnly.legsWithoutIds()).isEqualTo(1);
    }

    @Test
    void callersOwnIds_sglangOrUntypedPairs_andNoIds_goOutUnchanged() throws Exception {
        for (PdLegBodies b : new PdLegBodies[] {PdLegBodies.of(segment(), false, VLLM, VLLM),
                PdLegBodies.of(segment(), true, SGLANG, SGLANG), PdLegBodies.of(segment(), true, UNTYPED, SGLANG)}) {
            assertThat(read(b.prefill()).path("input_ids").size()).isEqualTo(2);
            assertThat(b.prefill()).isSameAs(b.decode());
            assertThat(b.legsWithoutIds()).isZero();
        }
        ObjectNode noIds = segment();
        noIds.remove("input_ids");
        assertThat(PdLegBodies.of(noIds, true, VLLM, VLLM).legsWithoutIds()).isZero();
    }
}
