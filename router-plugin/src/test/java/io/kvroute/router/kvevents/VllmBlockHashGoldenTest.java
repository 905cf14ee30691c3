package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.protocol.VllmBlockHash;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link VllmBlockHash} against chains computed by the real Python stack (hashlib, python-xxhash and
 * cbor2, exactly as vLLM's {@code vllm/utils/hashing.py} {@code sha256_cbor} / {@code xxhash_cbor} and
 * {@code vllm/v1/core/kv_cache_utils.py} {@code init_none_hash} / {@code hash_block_tokens} do):
 * {@code vllm-hash/block_hashes.json}, written by
 * {@code router-plugin/src/test/golden/generate_vllm_block_hashes.py}. The same cases for both
 * algorithms: three seeds, block sizes 1, 4 and 16, token ids at every CBOR width boundary up to
 * 2^31 - 1, zeros, lengths that are and are not multiples of the block size, with and without a LoRA
 * name, and with a {@code cache_salt} (short, 43 characters, multi-byte UTF-8, empty) with and without
 * the name: NONE_HASH, the first block's CBOR, every digest and every wire hash must match byte for byte.
 */
class VllmBlockHashGoldenTest {

    static JsonNode goldens() throws IOException {
        try (InputStream in = VllmBlockHashGoldenTest.class.getResourceAsStream("/vllm-hash/block_hashes.json")) {
            return new ObjectMapper().readTree(in);
        }
    }

    /** The case's LoRA name, or null. */
    static String lora(JsonNode c) {
        return c.get("lora_name").isNull() ? null : c.get("lora_name").asText();
    }

    /** The case's cache salt, or null. */
    static String salt(JsonNode c) {
        return c.get("cache_salt").isNull() ? null : c.get("cache_salt").asText();
    }

    static int[] tokens(JsonNode c) {
        int[] t = new int[c.get("tokens").size()];
        for (int i = 0; i < t.length; i++) {
            t[i] = c.get("tokens").get(i).asInt();
        }
        return t;
    }

    /** The case's wire hashes under {@code algo} ({@code sha256_cbor} or {@code xxhash_cbor}). */
    static long[] wire(JsonNode c, String algo) {
        JsonNode w = c.get(algo).get("wire");
        long[] out = new long[w.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Long.parseUnsignedLong(w.get(i).asText());
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {VllmBlockHash.SHA256_CBOR, VllmBlockHash.XXHASH_CBOR})
    void chains_equalPythonsByteForByte(String algo) throws IOException {
        HexFormat hex = HexFormat.of();
        JsonNode cases = goldens().get("cases");
        assertThat(cases.size()).isGreaterThan(150);
        int digestBytes = algo.equals(VllmBlockHash.SHA256_CBOR) ? 32 : 16;
        for (JsonNode c : cases) {
            String lora = lora(c);
            String salt = salt(c);
            int[] tokens = tokens(c);
            VllmBlockHash h = new VllmBlockHash(algo, c.get("seed").asText(), c.get("block_size").asInt());
            String what = algo + " " + c.get("seed") + "/" + c.get("block_size") + "/" + c.get("sequence") + "/" + lora
                    + "/" + salt;
            JsonNode expected = c.get(algo);
            assertThat(h.noneHash()).as("NONE_HASH " + what).hasSize(digestBytes);
            assertThat(hex.formatHex(h.noneHash())).as("NONE_HASH " + what)
                    .isEqualTo(expected.get("none_hash").asText());
            assertThat(hex.formatHex(h.blockCbor(null, tokens, 0, lora, salt))).as("first block CBOR " + what)
                    .isEqualTo(expected.get("first_block_cbor").asText());
            List<String> digests = new ArrayList<>();
            byte[] parent = null;
            for (int b = 0; b < tokens.length / h.blockSize(); b++) {
                parent = h.digest(parent, tokens, b * h.blockSize(), lora, b == 0 ? salt : null); // vLLM salts block 0
                digests.add(hex.formatHex(parent));
            }
            List<String> expectedDigests = new ArrayList<>();
            expected.get("digests").forEach(d -> expectedDigests.add(d.asText()));
            assertThat(digests).as("digests " + what).isEqualTo(expectedDigests);
            assertThat(h.hashes(tokens, tokens.length, lora, salt)).as("wire " + what).containsExactly(wire(c, algo));
        }
    }
}
