package io.kvroute.router.pd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BootstrapInjectorTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static ObjectNode body(String json) throws Exception {
        return (ObjectNode) JSON.readTree(json);
    }

    @Test
    void singleSequence_getsScalars_andTheRoomIsMaskedTo63Bits_onManySamples() throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 10_000; i++) {
            long raw = i == 0 ? -1L : i == 1 ? Long.MIN_VALUE : random.nextLong();
            ObjectNode body = body("{\"prompt\":\"x\"}");
            BootstrapInjector.inject(body, "10.0.0.1", 8998, () -> raw);
            assertThat(body.get("bootstrap_room").isIntegralNumber()).isTrue();
            long room = body.get("bootstrap_room").asLong();
            assertThat(room).isNotNegative().isEqualTo(raw & Long.MAX_VALUE);
            assertThat(body.get("bootstrap_host").asText()).isEqualTo("10.0.0.1");
            assertThat(body.get("bootstrap_port").asInt()).isEqualTo(8998);
        }
    }

    @Test
    void noBootstrapPort_isJsonNull_inScalarsAndArrays() throws Exception {
        ObjectNode one = body("{\"prompt\":\"x\"}");
        BootstrapInjector.inject(one, "h", null, () -> 5);
        assertThat(one.get("bootstrap_port").isNull()).isTrue();
        ObjectNode two = body("{\"prompt\":\"x\",\"n\":2}");
        BootstrapInjector.inject(two, "h", null, () -> 5);
        assertThat(two.get("bootstrap_port").size()).isEqualTo(2);
        assertThat(two.get("bootstrap_port").get(0).isNull()).isTrue();
    }

    @Test
    void batches_getOneRendezvousPerSequence_sizedByNOrTheBatchArray() throws Exception {
        String[][] cases = {
            {"{\"prompt\":\"x\",\"n\":3}", "3"},
            {"{\"prompt\":[\"a\",\"b\"]}", "2"},
            {"{\"text\":[\"a\",\"b\",\"c\",\"d\"]}", "4"},
            {"{\"input_ids\":[[1],[2]]}", "2"},
            {"{\"input_ids\":[1,2,3]}", "1"},
            {"{\"prompt\":[1,2,3]}", "1"},
            {"{\"prompt\":\"x\",\"n\":null}", "1"},
            {"{\"prompt\":\"x\",\"n\":1}", "1"},
        };
        for (String[] c : cases) {
            ObjectNode body = body(c[0]);
            long[] next = {-7};
            BootstrapInjector.inject(body, "h", 1, () -> next[0]--);
            int n = Integer.parseInt(c[1]);
            assertThat(BootstrapInjector.batchSize(body(c[0]))).as(c[0]).isEqualTo(n);
            JsonNode rooms = body.get("bootstrap_room");
            if (n == 1) {
                assertThat(rooms.isNumber()).as(c[0]).isTrue();
                continue;
            }
            assertThat(rooms.size()).as(c[0]).isEqualTo(n);
            assertThat(body.get("bootstrap_host").size()).isEqualTo(n);
            assertThat(body.get("bootstrap_port").size()).isEqualTo(n);
            for (JsonNode room : rooms) {
                assertThat(room.asLong()).isNotNegative();
            }
            assertThat(rooms.get(0)).isNotEqualTo(rooms.get(1));
        }
    }
}
