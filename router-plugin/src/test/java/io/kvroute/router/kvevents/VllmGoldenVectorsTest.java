package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventBatch;
import io.kvroute.protocol.KvEventWire;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * KV-event payloads in vLLM's own encoding ({@code vllm/distributed/kv_events.py}), written by
 * {@code src/test/resources/kvevents/vllm/gen.py} with Python's msgpack, not by any kvroute encoder.
 */
class VllmGoldenVectorsTest {
    static final int BS = 16;
    /** Tokens of the vectors (gen.py {@code T}): three full blocks of a chat. */
    static final int[] T = {151644, 872, 198, 9064, 374, 279, 6722, 315, 5616, 30, 151645, 198, 151644, 77091, 198,
        151667, 785, 6722, 315, 5616, 374, 26549, 13, 151645, 198, 151644, 872, 198, 3838, 911, 9625, 30, 151645, 198,
        151644, 77091, 198, 151667, 271, 151668, 271, 785, 6722, 315, 9625, 374, 12095, 13};
    /** gen.py {@code U}: one block. */
    static final int[] U = new int[BS];
    static final long H1 = new BigInteger("11289480438024683923").longValue();
    static final long H2 = new BigInteger("17134841764894605963").longValue();
    static final long H3 = new BigInteger("9644563597123067629").longValue();

    static {
        for (int i = 0; i < BS; i++) {
            U[i] = 100 + i;
        }
    }

    static byte[] vector(String name) throws IOException {
        try (InputStream in = VllmGoldenVectorsTest.class.getResourceAsStream("/kvevents/vllm/" + name + ".msgpack")) {
            if (in == null) {
                throw new IOException("no vector " + name);
            }
            return in.readAllBytes();
        }
    }

    @Test
    void realCapture_uint64HashAboveTwoToThe63_mapEventWithAllOfVllmsFields() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(0, vector("v0_26_capture"), true);
        assertThat(b.ts()).isEqualTo(1789095808.8378847);
        assertThat(b.rank()).isZero();
        KvEvent.BlockStored s = (KvEvent.BlockStored) b.events().get(0);
        assertThat(s.blockHashes()).containsExactly(new BigInteger("15760518052499183552").longValue());
        assertThat(s.hasParent()).isFalse();
        assertThat(s.tokenIds()).containsExactly(Arrays.copyOf(T, BS));
        assertThat(s.blockSize()).isEqualTo(BS);
        assertThat(s.loraId()).isEqualTo(-1);
        assertThat(s.medium()).isEqualTo("GPU");
        assertThat(s.groupIdx()).isZero();
        assertThat(s.specKind()).isEqualTo("full_attention");
        assertThat(s.extraKeys()).isNull(); // [None]: no block has extra keys
    }

    @Test
    void severalBlocksPerEvent_intParent_removalWithGroup() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(3, vector("multi_block_chain"), true);
        assertThat(b.rank()).isEqualTo(1);
        KvEvent.BlockStored first = (KvEvent.BlockStored) b.events().get(0);
        assertThat(first.blockHashes()).containsExactly(H1, H2);
        assertThat(first.tokenIds()).hasSize(2 * BS);
        KvEvent.BlockStored child = (KvEvent.BlockStored) b.events().get(1);
        assertThat(child.hasParent()).isTrue();
        assertThat(child.parentHash()).isEqualTo(H2);
        KvEvent.BlockRemoved r = (KvEvent.BlockRemoved) b.events().get(2);
        assertThat(r.blockHashes()).containsExactly(H3);
        assertThat(r.medium()).isEqualTo("GPU");
        assertThat(r.groupIdx()).isZero();
    }

    /** With {@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=0} the same blocks carry the same ids as the int form. */
    @Test
    void bytesDigests_foldToTheIntegerVllmWouldHaveSent() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(0, vector("bytes_hashes"), true);
        KvEvent.BlockStored first = (KvEvent.BlockStored) b.events().get(0);
        assertThat(first.blockHashes()).containsExactly(H1, H2);
        assertThat(((KvEvent.BlockStored) b.events().get(1)).parentHash()).isEqualTo(H2);
        assertThat(((KvEvent.BlockRemoved) b.events().get(2)).blockHashes()).containsExactly(H3);
    }

    @Test
    void hybridGroupsAndTiers_areDecodedWithTheirGroupKindAndMedium() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(0, vector("hybrid_tiers"), true);
        KvEvent.BlockStored swa = (KvEvent.BlockStored) b.events().get(1);
        assertThat(swa.groupIdx()).isEqualTo(1);
        assertThat(swa.specKind()).isEqualTo("sliding_window");
        KvEvent.BlockStored cpu = (KvEvent.BlockStored) b.events().get(2);
        assertThat(cpu.medium()).isEqualTo("CPU");
        assertThat(cpu.groupIdx()).isEqualTo(-1);
        assertThat(((KvEvent.BlockRemoved) b.events().get(3)).medium()).isEqualTo("CPU");
    }

    @Test
    void loraAndExtraKeys_areKeptApart() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(0, vector("lora_extra_keys"), true);
        KvEvent.BlockStored lora = (KvEvent.BlockStored) b.events().get(0);
        // the name wins over the engine's lora_id, and extra keys holding only the name are the adapter itself
        assertThat(lora.loraId()).isEqualTo(KvEventWire.loraIdOf("sql-adapter"));
        assertThat(lora.extraKeys()).isNull();
        KvEvent.BlockStored salted = (KvEvent.BlockStored) b.events().get(1);
        assertThat(salted.loraId()).isEqualTo(-1);
        assertThat(salted.extraKeys()).hasSize(1);
        assertThat(salted.extraKeys()[0]).isNotZero();
    }

    @Test
    void legacyTaggedArrays_ofVllmBeforeItsMapEncoding() throws Exception {
        KvEventBatch b = KvEventWire.decodePayload(0, vector("legacy_array"), true);
        KvEvent.BlockStored s = (KvEvent.BlockStored) b.events().get(0);
        assertThat(s.blockHashes()).containsExactly(H1);
        assertThat(s.tokenIds()).containsExactly(Arrays.copyOf(T, BS));
        assertThat(s.medium()).isEqualTo("GPU");
        assertThat(((KvEvent.BlockRemoved) b.events().get(1)).medium()).isEqualTo("GPU");
        assertThat(b.events().get(2)).isInstanceOf(KvEvent.AllBlocksCleared.class);
    }
}
