package io.kvroute.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Both wire encodings of vLLM {@code vllm/distributed/kv_events.py} (events as tagged arrays or as maps
 * with a {@code type} key), packed here with a raw msgpack packer (not our publisher's encoder).
 */
class KvEventWireDecodeTest {

    interface Body {
        void pack(MessageBufferPacker p) throws IOException;
    }

    static byte[] pack(Body body) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.pack(p);
            return p.toByteArray();
        }
    }

    @Test
    void taggedArrays_sglangStyle_withTrailingFieldsAndRank() throws Exception {
        byte[] payload = pack(p -> {
            p.packArrayHeader(3).packDouble(1.5).packArrayHeader(3);
            p.packArrayHeader(9).packString("BlockStored");
            p.packArrayHeader(2).packLong(-5).packLong(Long.MAX_VALUE);
            p.packNil();
            p.packArrayHeader(4).packInt(1).packInt(2).packInt(3).packInt(4);
            p.packInt(2).packNil().packString("GPU").packString("lora-x").packArrayHeader(0); // + lora_name, extra_keys
            p.packArrayHeader(3).packString("BlockRemoved").packArrayHeader(1).packLong(-5).packString("GPU");
            p.packArrayHeader(1).packString("AllBlocksCleared");
            p.packInt(1);
        });
        KvEventBatch b = KvEventWire.decodePayload(9, payload);
        assertThat(b.seq()).isEqualTo(9);
        assertThat(b.rank()).isEqualTo(1);
        KvEvent.BlockStored s = (KvEvent.BlockStored) b.events().get(0);
        assertThat(s.blockHashes()).containsExactly(-5, Long.MAX_VALUE);
        assertThat(s.hasParent()).isFalse();
        assertThat(s.blockSize()).isEqualTo(2);
        assertThat(s.loraId()).isEqualTo(KvEventWire.loraIdOf("lora-x")); // lora_name without lora_id
        assertThat(s.medium()).isEqualTo("GPU");
        assertThat(((KvEvent.BlockRemoved) b.events().get(1)).blockHashes()).containsExactly(-5);
        assertThat(b.events().get(2)).isInstanceOf(KvEvent.AllBlocksCleared.class);
    }

    @Test
    void taggedMaps_vllmStyle_bytesHashes_anyKeyOrder_noRank() throws Exception {
        // bytes hash: its last 8 bytes, big-endian (the integer vLLM sends by default)
        byte[] h = {9, 9, 9, (byte) 0x80, 0, 0, 0, 0, 0, 0, 1};
        byte[] payload = pack(p -> {
            p.packArrayHeader(2).packInt(7).packArrayHeader(2);
            p.packMapHeader(5).packString("block_hashes").packArrayHeader(1).packBinaryHeader(h.length).writePayload(h);
            p.packString("parent_block_hash").packBinaryHeader(h.length).writePayload(h);
            p.packString("type").packString("BlockStored");
            p.packString("block_size").packInt(16);
            p.packString("lora_id").packInt(3);
            p.packMapHeader(1).packString("type").packString("AllBlocksCleared");
        });
        KvEventBatch b = KvEventWire.decodePayload(0, payload);
        assertThat(b.rank()).isEqualTo(-1);
        KvEvent.BlockStored s = (KvEvent.BlockStored) b.events().get(0);
        assertThat(s.blockHashes()).containsExactly(0x8000000000000001L);
        assertThat(s.hasParent()).isTrue();
        assertThat(s.parentHash()).isEqualTo(0x8000000000000001L);
        assertThat(s.blockSize()).isEqualTo(16);
        assertThat(s.loraId()).isEqualTo(3);
    }

    @Test
    void tokenIds_areKeptOnlyWhenAsked_inBothEncodings() throws Exception {
        byte[] payload = pack(p -> {
            p.packArrayHeader(2).packDouble(0).packArrayHeader(3);
            p.packArrayHeader(7).packString("BlockStored").packArrayHeader(1).packLong(9).packNil();
            p.packArrayHeader(2).packInt(70000).packLong(4294967295L >>> 1);
            p.packInt(2).packNil().packString("GPU");
            p.packMapHeader(3).packString("type").packString("BlockStored").packString("token_ids")
                    .packArrayHeader(2).packInt(1).packInt(2).packString("block_hashes").packArrayHeader(1).packLong(8);
            p.packArrayHeader(4).packString("BlockStored").packArrayHeader(1).packLong(7).packNil().packNil();
        });
        List<KvEvent> with = KvEventWire.decodePayload(0, payload, true).events();
        assertThat(((KvEvent.BlockStored) with.get(0)).tokenIds()).containsExactly(70000, Integer.MAX_VALUE);
        assertThat(((KvEvent.BlockStored) with.get(1)).tokenIds()).containsExactly(1, 2);
        assertThat(((KvEvent.BlockStored) with.get(2)).tokenIds()).isNull(); // nil token_ids: absent
        for (KvEvent e : KvEventWire.decodePayload(0, payload).events()) {
            assertThat(((KvEvent.BlockStored) e).tokenIds()).isNull();
        }
    }

    @Test
    void tokenIds_outOfRangeOrNotIntegers_areBadFields() throws Exception {
        for (long bad : new long[] {-1, 1L << 31}) {
            byte[] payload = pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1)
                    .packArrayHeader(4).packString("BlockStored").packArrayHeader(1).packLong(9).packNil()
                    .packArrayHeader(1).packLong(bad));
            assertThatThrownBy(() -> KvEventWire.decodePayload(0, payload, true))
                    .isInstanceOfSatisfying(KvEventWire.Malformed.class,
                            m -> assertThat(m.reason).isEqualTo(KvMalformedReason.BAD_FIELD));
            assertThat(KvEventWire.decodePayload(0, payload).events()).hasSize(1); // skipped when not asked
        }
        byte[] notArray = pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1)
                .packArrayHeader(4).packString("BlockStored").packArrayHeader(1).packLong(9).packNil().packString("x"));
        assertThatThrownBy(() -> KvEventWire.decodePayload(0, notArray, true))
                .isInstanceOfSatisfying(KvEventWire.Malformed.class,
                        m -> assertThat(m.reason).isEqualTo(KvMalformedReason.BAD_FIELD));
    }

    @Test
    void uint64Hash_keepsItsBits() throws Exception {
        byte[] payload = pack(p -> {
            p.packArrayHeader(2).packDouble(0).packArrayHeader(1);
            p.packArrayHeader(2).packString("BlockRemoved").packArrayHeader(1)
                    .packBigInteger(new java.math.BigInteger("18446744073709551615"));
        });
        KvEvent.BlockRemoved r = (KvEvent.BlockRemoved) KvEventWire.decodePayload(0, payload).events().get(0);
        assertThat(r.blockHashes()).containsExactly(-1L);
    }

    @Test
    void malformedInputs_areCountedByReason() throws Exception {
        assertReason(pack(p -> p.packMapHeader(0)), KvMalformedReason.BAD_BATCH);
        assertReason(pack(p -> p.packArrayHeader(2).packString("x").packArrayHeader(0)), KvMalformedReason.BAD_BATCH);
        assertReason(pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1).packArrayHeader(1).packString("Nope")),
                KvMalformedReason.UNKNOWN_EVENT);
        assertReason(pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1)
                .packArrayHeader(2).packString("BlockRemoved").packArrayHeader(1).packDouble(1.0)), KvMalformedReason.BAD_FIELD);
        assertReason(pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1)
                .packMapHeader(1).packString("block_hashes").packArrayHeader(0)), KvMalformedReason.BAD_FIELD);
        // a header claiming 2^31-1 events in a few bytes must not allocate for them
        assertReason(new byte[] {(byte) 0x92, 0x00, (byte) 0xdd, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff},
                KvMalformedReason.TRUNCATED);
        assertReason(new byte[] {(byte) 0xc1}, KvMalformedReason.GARBAGE);
        assertThatThrownBy(() -> KvEventWire.decode(new byte[][] {new byte[0], new byte[7], new byte[0]}, 3, false))
                .isInstanceOfSatisfying(KvEventWire.Malformed.class,
                        m -> assertThat(m.reason).isEqualTo(KvMalformedReason.BAD_FRAMES));
    }

    /** SGLang's decoder refuses a hash given as a string or as a binary shorter than 8 bytes; so do we. */
    @Test
    void stringOrShortBinaryHash_isABadField() throws Exception {
        assertReason(pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1)
                .packArrayHeader(2).packString("BlockRemoved").packArrayHeader(1).packString("12345678")),
                KvMalformedReason.BAD_FIELD);
        assertReason(pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1)
                .packArrayHeader(2).packString("BlockRemoved").packArrayHeader(1).packBinaryHeader(3)
                .writePayload(new byte[] {1, 2, 3})), KvMalformedReason.BAD_FIELD);
        assertReason(pack(p -> p.packArrayHeader(2).packDouble(0).packArrayHeader(1)
                .packArrayHeader(3).packString("BlockStored").packArrayHeader(1).packLong(1).packBinaryHeader(3)
                .writePayload(new byte[] {1, 2, 3})), KvMalformedReason.BAD_FIELD); // as a parent too
    }

    @Test
    void randomBytes_neverThrowAnythingButMalformed() {
        SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < 20_000; i++) {
            byte[] b = new byte[rnd.nextInt(0, 80)];
            for (int k = 0; k < b.length; k++) {
                b[k] = (byte) rnd.nextInt(256);
            }
            if (b.length > 2 && rnd.nextBoolean()) {
                b[0] = (byte) 0x93;
                b[1] = 0x00;
            }
            try {
                KvEventWire.decodePayload(i, b);
            } catch (KvEventWire.Malformed expected) {
                // counted by the caller
            }
        }
    }

    private static void assertReason(byte[] payload, KvMalformedReason reason) {
        assertThatThrownBy(() -> KvEventWire.decodePayload(0, payload))
                .isInstanceOfSatisfying(KvEventWire.Malformed.class, m -> assertThat(m.reason).isEqualTo(reason));
    }
}
