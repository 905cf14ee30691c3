package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import io.kvroute.protocol.MalformedReason;
import io.kvroute.protocol.LoadStatWire;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import io.kvroute.scheduler.report.HandLoadVectors;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Decodes the golden vectors the scheduler's encoder test pins (scheduler-plugin test-jar,
 * {@code /load-vectors/}): the two sides agree byte for byte.
 */
class GoldenVectorsDecodeTest {

    @Test
    void everyGoldenVector_decodesToItsExpectedFieldsOrIsRejectedForItsReason() throws Exception {
        List<String> names = new String(resource("index.txt"), StandardCharsets.UTF_8).lines().toList();
        assertThat(names).hasSizeGreaterThanOrEqualTo(10);
        int valid = 0;
        for (String name : names) {
            byte[] payload = resource(name + ".msgpack");
            Properties p = new Properties();
            p.load(new StringReader(new String(resource(name + ".properties"), StandardCharsets.UTF_8)));
            assertThat(HexFormat.of().formatHex(payload)).as(name).isEqualTo(p.getProperty("payload_hex"));
            if (Boolean.parseBoolean(p.getProperty("valid"))) {
                valid++;
                byte[] seqFrame = HexFormat.of().parseHex(p.getProperty("seq_frame_hex"));
                LoadReport r = LoadStatWire.decode(new byte[][] {"load".getBytes(), seqFrame, payload}, 3);
                assertThat(Long.toUnsignedString(r.seq())).as(name).isEqualTo(p.getProperty("seq"));
                assertThat(r.numRunningReqs()).as(name).isEqualTo(Integer.parseInt(p.getProperty("num_running_reqs")));
                assertThat(r.numWaitingReqs()).as(name).isEqualTo(Integer.parseInt(p.getProperty("num_waiting_reqs")));
                assertThat(r.numTokens()).as(name).isEqualTo(Long.parseLong(p.getProperty("num_tokens")));
                assertThat(r.maxTotalNumTokens()).as(name).isEqualTo(Long.parseLong(p.getProperty("max_total_num_tokens")));
                assertThat(r.attnDpRank()).as(name).isEqualTo(Integer.parseInt(p.getProperty("attn_dp_rank")));
                assertThat(r.hasExtension()).as(name).isEqualTo(Boolean.parseBoolean(p.getProperty("has_extension")));
                if (r.hasExtension()) {
                    assertThat(r.numWaitingUncachedTokens()).isEqualTo(Long.parseLong(p.getProperty("num_waiting_uncached_tokens")));
                    assertThat(r.numTotalTokens()).isEqualTo(Long.parseLong(p.getProperty("num_total_tokens")));
                    assertThat(r.maxRunningRequests()).isEqualTo(Integer.parseInt(p.getProperty("max_running_requests")));
                    assertThat(r.totalPrefillUncachedTokens()).isEqualTo(Long.parseLong(p.getProperty("total_prefill_uncached_tokens")));
                    assertThat(r.totalPrefillBusyUs()).isEqualTo(Long.parseLong(p.getProperty("total_prefill_busy_us")));
                }
            } else {
                assertThatThrownBy(() -> LoadStatWire.decodePayload(0, payload)).as(name)
                        .isInstanceOfSatisfying(LoadStatWire.Malformed.class,
                                m -> assertThat(m.reason.label()).as(name).isEqualTo(p.getProperty("reason")));
            }
        }
        assertThat(valid).isGreaterThanOrEqualTo(4);
    }

    @Test
    void frameLevelDefects_areBadFrames() {
        byte[] payload = HexFormat.of().parseHex("96a84c6f616453746174" + "0c03cdbc550001");
        byte[] seq = new byte[8];
        assertMalformed(new byte[][] {"load".getBytes(), seq, payload}, 2, MalformedReason.BAD_FRAMES);
        assertMalformed(new byte[][] {"load".getBytes(), new byte[7], payload}, 3, MalformedReason.BAD_FRAMES);
        assertMalformed(new byte[][] {"load".getBytes(), seq, payload}, 4, MalformedReason.BAD_FRAMES);
    }

    @Test
    void topicFrameValue_isIgnored() throws Exception {
        byte[] payload = HexFormat.of().parseHex("96a84c6f616453746174" + "0c03cdbc550001");
        LoadReport r = LoadStatWire.decode(new byte[][] {new byte[0], new byte[8], payload}, 3);
        assertThat(r.numRunningReqs()).isEqualTo(12);
    }

    /** Vectors a person assembled from the msgpack spec (scheduler test-jar, {@code /load-vectors-hand/}). */
    @Test
    void everyHandWrittenVector_decodesAsItsCommentsSay() throws Exception {
        List<HandLoadVectors.Vector> vectors = HandLoadVectors.all();
        assertThat(vectors).hasSizeGreaterThanOrEqualTo(10);
        for (HandLoadVectors.Vector v : vectors) {
            Map<String, String> e = v.expected();
            if (!v.valid()) {
                assertThatThrownBy(() -> LoadStatWire.decodePayload(0, v.payload())).as(v.name())
                        .isInstanceOfSatisfying(LoadStatWire.Malformed.class,
                                m -> assertThat(m.reason.label()).as(v.name()).isEqualTo(e.get("reason")));
                continue;
            }
            LoadReport r = LoadStatWire.decodePayload(0, v.payload());
            assertThat(r.numRunningReqs()).as(v.name()).isEqualTo(Integer.parseInt(e.get("num_running_reqs")));
            assertThat(r.numWaitingReqs()).as(v.name()).isEqualTo(Integer.parseInt(e.get("num_waiting_reqs")));
            assertThat(r.numTokens()).as(v.name()).isEqualTo(Long.parseLong(e.get("num_tokens")));
            assertThat(r.maxTotalNumTokens()).as(v.name()).isEqualTo(Long.parseLong(e.get("max_total_num_tokens")));
            assertThat(r.attnDpRank()).as(v.name()).isEqualTo(Integer.parseInt(e.get("attn_dp_rank")));
            assertThat(r.hasExtension()).as(v.name()).isEqualTo(Boolean.parseBoolean(e.get("has_extension")));
            if (r.hasExtension()) {
                assertThat(r.numWaitingUncachedTokens()).as(v.name()).isEqualTo(Long.parseLong(e.get("num_waiting_uncached_tokens")));
                assertThat(r.numTotalTokens()).as(v.name()).isEqualTo(Long.parseLong(e.get("num_total_tokens")));
                assertThat(r.maxRunningRequests()).as(v.name()).isEqualTo(Integer.parseInt(e.get("max_running_requests")));
                assertThat(r.totalPrefillUncachedTokens()).as(v.name()).isEqualTo(Long.parseLong(e.get("total_prefill_uncached_tokens")));
                assertThat(r.totalPrefillBusyUs()).as(v.name()).isEqualTo(Long.parseLong(e.get("total_prefill_busy_us")));
            }
        }
    }

    @Test
    void randomBytes_neverThrowAnythingButMalformed() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
        for (int i = 0; i < 20_000; i++) {
            byte[] b = new byte[rnd.nextInt(0, 64)];
            for (int k = 0; k < b.length; k++) {
                b[k] = (byte) rnd.nextInt(256);
            }
            if (b.length > 0 && rnd.nextBoolean()) {
                b[0] = (byte) 0x96; // look like a 6-array to reach deeper paths
            }
            try {
                LoadStatWire.decodePayload(i, b);
            } catch (LoadStatWire.Malformed expected) {
                // dropped, counted by the caller
            }
        }
    }

    private static void assertMalformed(byte[][] frames, int count, MalformedReason reason) {
        assertThatThrownBy(() -> LoadStatWire.decode(frames, count))
                .isInstanceOfSatisfying(LoadStatWire.Malformed.class, m -> assertThat(m.reason).isEqualTo(reason));
    }

    static byte[] resource(String name) throws IOException {
        try (InputStream in = GoldenVectorsDecodeTest.class.getResourceAsStream("/load-vectors/" + name)) {
            assertThat(in).as("classpath /load-vectors/" + name + " (scheduler-plugin test-jar)").isNotNull();
            return in.readAllBytes();
        }
    }
}
