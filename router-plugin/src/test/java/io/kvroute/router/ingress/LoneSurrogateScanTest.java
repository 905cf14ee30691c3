package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The raw-byte pre-scan that lets ingress skip the surrogate walk: it may only say "none" for a body whose
 * decoded strings hold no unpaired surrogate. Checked against the walk itself on random bodies mixing ASCII,
 * CJK, emoji (four-byte UTF-8), JSON escapes and surrogates encoded as three-byte sequences.
 */
class LoneSurrogateScanTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void plainTextCjkAndEmoji_needNoWalk() {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello 数据 🙂 \\\"quoted\\\" \\n\"}]}";
        assertThat(IngressTokenization.mayDecodeToLoneSurrogate(body.getBytes(StandardCharsets.UTF_8))).isFalse();
    }

    @Test
    void neverSaysNoneWhenTheWalkWouldReject() throws Exception {
        SplittableRandom rnd = new SplittableRandom(20261201);
        byte[][] pieces = {utf8("ab "), utf8("数据"), utf8("🙂"), utf8("\\n"), utf8("\\\\u"), utf8("\\ud83d\\ude00"),
                utf8("\\ud800"), utf8("\\udc00x"), utf8("\\u0041"), {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
                {(byte) 0xED, (byte) 0xBF, (byte) 0xBF}, {(byte) 0xED, (byte) 0x9F, (byte) 0xBF}};
        int rejected = 0;
        int skipped = 0;
        for (int round = 0; round < 3_000; round++) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.writeBytes(utf8("{\"messages\":[{\"role\":\"user\",\"content\":\""));
            for (int i = rnd.nextInt(6); i > 0; i--) {
                body.writeBytes(pieces[rnd.nextInt(pieces.length)]);
            }
            body.writeBytes(utf8("\"}]}"));
            byte[] bytes = body.toByteArray();
            JsonNode root;
            try {
                root = JSON.readTree(bytes);
            } catch (java.io.IOException invalidJson) {
                continue; // a 400 before any walk
            }
            boolean walkRejects;
            try {
                IngressTokenization.rejectUnpairedSurrogates(root);
                walkRejects = false;
            } catch (ApiException e) {
                walkRejects = true;
            }
            boolean scanSaysMaybe = IngressTokenization.mayDecodeToLoneSurrogate(bytes);
            if (walkRejects) {
                rejected++;
                assertThat(scanSaysMaybe).as("round %d: %s", round, new String(bytes, StandardCharsets.UTF_8)).isTrue();
            }
            skipped += scanSaysMaybe ? 0 : 1;
        }
        assertThat(rejected).as("bodies the walk rejected").isGreaterThan(100);
        assertThat(skipped).as("bodies the scan let skip the walk").isGreaterThan(100);
    }

    @Test
    void aSurrogateEncodedAsThreeBytes_isRefusedByTheParser_andFlaggedByTheScanAnyway() {
        byte[] body = concat(utf8("{\"messages\":[{\"role\":\"user\",\"content\":\"x"), new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
                utf8("\"}]}"));
        // Jackson refuses it (a 400 before any walk); the scan flags it too, should a parser ever let it through
        assertThatThrownBy(() -> JSON.readTree(body)).hasMessageContaining("surrogate");
        assertThat(IngressTokenization.mayDecodeToLoneSurrogate(body)).isTrue();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
