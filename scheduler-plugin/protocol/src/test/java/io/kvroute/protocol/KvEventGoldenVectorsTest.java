package io.kvroute.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * KV-event batches written out byte by byte from the msgpack spec (not by {@link KvEventWire}), in
 * both event shapes, checked in both directions: the encoder must produce exactly these bytes, and
 * the decoder must read them back to the expected events. A field swapped, renamed, re-ordered or
 * packed in another width on either side fails here.
 */
class KvEventGoldenVectorsTest {

    private static final double TS = 1.5;
    /** A hash with the top bit set: SGLang sends it as a signed int64, vLLM as a uint64. */
    private static final long HIGH_HASH = Long.MIN_VALUE + 5;

    /** SGLang's tagged arrays (python/sglang/srt/disaggregation/kv_events.py), rank 1. */
    private static byte[] sglangBatch() {
        return bytes(
                b(0x93), // batch: fixarray of 3 [ts, events, rank]
                b(0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0), // ts: float64 1.5
                b(0x93), // events: fixarray of 3
                // ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium]
                b(0x97), // fixarray of 7
                b(0xab), ascii("BlockStored"), // fixstr of 11
                b(0x92, 0x01, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0x05), // block_hashes: [1, HIGH_HASH as int64]
                b(0xcd, 0x12, 0x34), // parent_block_hash: uint16 0x1234
                b(0x94, 0x01, 0x02, 0x03, 0x04), // token_ids: [1, 2, 3, 4]
                b(0x02), // block_size: 2
                b(0xc0), // lora_id: nil (SGLang's events carry no adapter)
                b(0xa3), ascii("GPU"), // medium
                // ["BlockRemoved", block_hashes, medium]
                b(0x93), // fixarray of 3
                b(0xac), ascii("BlockRemoved"), // fixstr of 12
                b(0x91, 0xfe), // block_hashes: [-2] (negative fixint)
                b(0xa3), ascii("GPU"), // medium
                // ["AllBlocksCleared"]
                b(0x91, 0xb0), ascii("AllBlocksCleared"), // fixarray of 1, fixstr of 16
                b(0x01)); // attn_dp_rank: 1
    }

    private static List<KvEventWire.Event> sglangEvents() {
        return List.of(
                KvEventWire.stored(new long[] {1, HIGH_HASH}, 0x1234L, new int[] {1, 2, 3, 4}, 2, null, null),
                KvEventWire.removed(new long[] {-2}),
                KvEventWire.cleared());
    }

    /**
     * vLLM's map events (vllm/distributed/kv_events.py, msgspec {@code tag=True, omit_defaults=True}):
     * a LoRA request's blocks at the root, a base-model block under a parent, a removal, a clear; rank 0.
     */
    private static byte[] vllmBatch() {
        return bytes(
                b(0x93), // batch: fixarray of 3
                b(0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0), // ts: float64 1.5
                b(0x94), // events: fixarray of 4
                b(0x89), // fixmap of 9: a LoRA BlockStored carries extra_keys too
                b(0xa4), ascii("type"), b(0xab), ascii("BlockStored"),
                b(0xac), ascii("block_hashes"), b(0x91, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0x05), // [HIGH_HASH as uint64]
                b(0xb1), ascii("parent_block_hash"), b(0xc0), // nil: the chain starts at the root
                b(0xa9), ascii("token_ids"), b(0x92, 0x05, 0x06), // [5, 6]
                b(0xaa), ascii("block_size"), b(0x02),
                b(0xa7), ascii("lora_id"), b(0x03),
                b(0xa6), ascii("medium"), b(0xa3), ascii("GPU"),
                b(0xa9), ascii("lora_name"), b(0xa3), ascii("sql"),
                b(0xaa), ascii("extra_keys"), b(0x91, 0x91, 0xa3), ascii("sql"), // [("sql",)]: one block
                b(0x88), // fixmap of 8: the base model's BlockStored, lora fields nil
                b(0xa4), ascii("type"), b(0xab), ascii("BlockStored"),
                b(0xac), ascii("block_hashes"), b(0x91, 0x09), // [9]
                b(0xb1), ascii("parent_block_hash"), b(0x07), // 7
                b(0xa9), ascii("token_ids"), b(0x92, 0x07, 0x08), // [7, 8]
                b(0xaa), ascii("block_size"), b(0x02),
                b(0xa7), ascii("lora_id"), b(0xc0),
                b(0xa6), ascii("medium"), b(0xa3), ascii("GPU"),
                b(0xa9), ascii("lora_name"), b(0xc0),
                b(0x83), // fixmap of 3: BlockRemoved
                b(0xa4), ascii("type"), b(0xac), ascii("BlockRemoved"),
                b(0xac), ascii("block_hashes"), b(0x91, 0x09),
                b(0xa6), ascii("medium"), b(0xa3), ascii("GPU"),
                b(0x81), // fixmap of 1: AllBlocksCleared
                b(0xa4), ascii("type"), b(0xb0), ascii("AllBlocksCleared"),
                b(0x00)); // data_parallel_rank: 0
    }

    private static List<KvEventWire.Event> vllmEvents() {
        return List.of(
                KvEventWire.stored(new long[] {HIGH_HASH}, null, new int[] {5, 6}, 2, 3, "sql"),
                KvEventWire.stored(new long[] {9}, 7L, new int[] {7, 8}, 2, null, null),
                KvEventWire.removed(new long[] {9}),
                KvEventWire.cleared());
    }

    @Test
    void sglangEncoder_writesTheHandWrittenBytes() {
        assertThat(hex(KvEventWire.sglangBatch(TS, sglangEvents(), 1))).isEqualTo(hex(sglangBatch()));
    }

    @Test
    void vllmEncoder_writesTheHandWrittenBytes() {
        assertThat(hex(KvEventWire.vllmBatch(TS, vllmEvents(), 0))).isEqualTo(hex(vllmBatch()));
    }

    @Test
    void decoder_readsTheHandWrittenSglangBytes() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(4, sglangBatch(), true);
        assertThat(b).usingRecursiveComparison().isEqualTo(new KvEventBatch(4, TS, List.of(
                new KvEvent.BlockStored(new long[] {1, HIGH_HASH}, true, 0x1234, 2, -1, new int[] {1, 2, 3, 4},
                        "GPU", -1, null, null),
                new KvEvent.BlockRemoved(new long[] {-2}, "GPU", -1),
                new KvEvent.AllBlocksCleared()), 1));
    }

    @Test
    void decoder_readsTheHandWrittenVllmBytes() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(5, vllmBatch(), true);
        assertThat(b).usingRecursiveComparison().isEqualTo(new KvEventBatch(5, TS, List.of(
                // lora_name wins over the engine's lora_id; the adapter-only extra key is dropped (it is the loraId)
                new KvEvent.BlockStored(new long[] {HIGH_HASH}, false, 0, 2, KvEventWire.loraIdOf("sql"),
                        new int[] {5, 6}, "GPU", -1, null, null),
                new KvEvent.BlockStored(new long[] {9}, true, 7, 2, -1, new int[] {7, 8}, "GPU", -1, null, null),
                new KvEvent.BlockRemoved(new long[] {9}, "GPU", -1),
                new KvEvent.AllBlocksCleared()), 0));
    }

    @Test
    void replayFrames_haveTheTopicOnlyInVllmShape() {
        byte[] topic = ascii("kv");
        byte[] payload = {(byte) 0x90};
        byte[] seq7 = {0, 0, 0, 0, 0, 0, 0, 7};
        byte[] end = {-1, -1, -1, -1, -1, -1, -1, -1};
        assertThat(KvEventWire.replayAnswer(topic, 7, payload)).containsExactly(new byte[0], topic, seq7, payload);
        assertThat(KvEventWire.replayAnswer(null, 7, payload)).containsExactly(new byte[0], seq7, payload);
        assertThat(KvEventWire.replayEnd(true)).containsExactly(new byte[0], new byte[0], end, new byte[0]);
        assertThat(KvEventWire.replayEnd(false)).containsExactly(new byte[0], end, new byte[0]);

        assertThat(KvEventWire.replaySeqIndex(new byte[][] {new byte[0], topic, seq7, payload}, 4)).isEqualTo(2);
        assertThat(KvEventWire.replaySeqIndex(new byte[][] {new byte[0], seq7, payload}, 3)).isEqualTo(1);
        assertThat(KvEventWire.replaySeqIndex(new byte[][] {seq7, payload}, 2)).isEqualTo(0);
        assertThat(KvEventWire.replaySeqIndex(new byte[][] {new byte[0], new byte[7], payload}, 3)).isEqualTo(-1);
        assertThat(KvEventWire.replaySeqIndex(new byte[][] {seq7}, 1)).isEqualTo(-1);
    }

    private static byte[] b(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] bytes(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
