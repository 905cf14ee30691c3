package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The forwarded body's {@code input_ids} insertion, written straight into bytes, against the naive model
 * (the ids appended through a StringBuilder) and against Jackson's reading of the result: the same bytes,
 * the same ids, every other field untouched. Ids cover every decimal length, 0, negatives and both int
 * extremes; bodies carry non-ASCII text and trailing whitespace.
 */
class WithInputIdsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int[] EDGES = {0, 9, 10, 99, 100, 151_643, 999_999, 1_000_000, Integer.MAX_VALUE, -1, -10,
            Integer.MIN_VALUE, Integer.MIN_VALUE + 1};

    @Test
    void insertsTheIdsByteForByteAsTheNaiveWriterDoes() throws Exception {
        SplittableRandom rnd = new SplittableRandom(19);
        for (int round = 0; round < 2_000; round++) {
            ObjectNode tree = JSON.createObjectNode();
            tree.put("model", "m");
            tree.putArray("messages").addObject().put("role", "user").put("content", text(rnd));
            if (rnd.nextBoolean()) {
                tree.putObject("sampling_params").put("max_new_tokens", rnd.nextInt(100));
            }
            byte[] body = (tree.toString() + " \n".repeat(rnd.nextInt(3))).getBytes(StandardCharsets.UTF_8);
            int[] ids = new int[rnd.nextInt(4) == 0 ? rnd.nextInt(3) : rnd.nextInt(400)];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = switch (rnd.nextInt(3)) {
                    case 0 -> EDGES[rnd.nextInt(EDGES.length)];
                    case 1 -> rnd.nextInt(200_000);
                    default -> rnd.nextInt();
                };
            }
            byte[] out = IngressTokenization.withInputIds(body, ids);
            assertThat(new String(out, StandardCharsets.UTF_8)).as("round %d", round).isEqualTo(naive(body, ids));
            JsonNode back = JSON.readTree(out);
            assertThat(back.path("input_ids").size()).isEqualTo(ids.length);
            for (int i = 0; i < ids.length; i++) {
                assertThat(back.path("input_ids").get(i).asLong()).isEqualTo(ids[i]);
            }
            ((ObjectNode) back).remove("input_ids");
            assertThat(back).isEqualTo(tree);
        }
    }

    /** The model: what the router wrote before (StringBuilder, then bytes). */
    private static String naive(byte[] body, int[] ids) {
        String text = new String(body, StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(text.substring(0, text.lastIndexOf('}'))).append(",\"input_ids\":[");
        for (int i = 0; i < ids.length; i++) {
            out.append(i > 0 ? "," : "").append(ids[i]);
        }
        return out.append("]}").toString();
    }

    private static String text(SplittableRandom rnd) {
        String[] pieces = {"hello", " ", "数据", "🙂", "\"quoted\"", "\\", "}", "{", "\n", "<|im_start|>"};
        StringBuilder s = new StringBuilder();
        for (int i = rnd.nextInt(8); i > 0; i--) {
            s.append(pieces[rnd.nextInt(pieces.length)]);
        }
        return s.toString();
    }
}
