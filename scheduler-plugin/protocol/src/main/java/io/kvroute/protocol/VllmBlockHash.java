package io.kvroute.protocol;

import static java.util.Objects.requireNonNull;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;

/**
 * vLLM's chained prefix-cache block hash with {@code --prefix-caching-hash-algo sha256_cbor} or
 * {@code xxhash_cbor}, as the router must compute it to look a request up among a vLLM engine's own
 * block hashes. Per full block of {@code blockSize} tokens (vLLM {@code vllm/v1/core/kv_cache_utils.py},
 * {@code hash_block_tokens}):
 * <pre>digest = H(canonical CBOR of [parent digest or NONE_HASH, [token ids...], extra_keys])</pre>
 * with {@code NONE_HASH = H(canonical CBOR of the PYTHONHASHSEED string)} ({@code init_none_hash};
 * without the variable vLLM draws 32 random bytes per process, which no router can reproduce). vLLM
 * {@code vllm/utils/hashing.py} ({@code get_hash_fn_by_name} maps the flag's name to the function):
 * <ul>
 *   <li>{@code sha256_cbor(x) = hashlib.sha256(cbor2.dumps(x, canonical=True)).digest()}: 32 bytes;</li>
 *   <li>{@code xxhash_cbor(x) = xxhash.xxh3_128_digest(cbor2.dumps(x, canonical=True))} (through
 *       {@code _xxhash_digest}): 16 bytes, XXH3-128 with seed 0 in its canonical form, the high 64 bits
 *       big-endian then the low 64 bits big-endian (python-xxhash's {@code *_digest}, xxHash's
 *       {@code XXH128_canonicalFromHash}). hash4j's {@link HashValue128#getMostSignificantBits()} is
 *       that high half.</li>
 * </ul>
 * The parent of a block is its parent's whole digest (16 bytes for xxhash_cbor), so the two chains
 * differ from the first block on. {@code extra_keys} is None (CBOR null) for a plain text request,
 * else the tuple {@code lora_extra_keys + mm_extra_keys + cache_salt_keys + prompt_embeds_keys}
 * ({@code generate_block_hash_extra_keys}): {@code (lora_name,)} on every block of a LoRA request
 * ({@code _gen_lora_extra_hash_keys}), then the request's {@code cache_salt} on the first block only,
 * when it is a non-empty string ({@code [request.cache_salt] if (start_token_idx == 0 and
 * request.cache_salt)}). Multimodal ids and prompt-embedding hashes are not reproduced here (the
 * caller declines such requests). The wire hash is the digest's last 8 bytes read big-endian
 * ({@code maybe_convert_block_hash}: {@code int.from_bytes(digest, "big") & (2**64-1)}), for both
 * algorithms (for xxhash_cbor: XXH3-128's low 64 bits), which is also how the event decoder folds a
 * raw-bytes hash ({@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=0}), so one key serves both.
 *
 * <p><b>Why hand-written CBOR.</b> The shape is fixed and tiny: a 3-array of a byte string, an array of
 * non-negative integers and null or an array of one or two text strings. Canonical CBOR (RFC 8949 §4.2.1, as
 * Python's {@code cbor2.dumps(canonical=True)} writes it) only asks for the shortest argument width,
 * definite lengths and no map reordering here (there are no maps): about thirty lines, against a new
 * dependency (Jackson's CBOR module is not in this build's repository) whose canonical output would
 * need the same byte-for-byte check anyway. The goldens from cbor2 and python-xxhash themselves
 * ({@code router-plugin/src/test/golden/generate_vllm_block_hashes.py}) check the encoding and both
 * digests byte for byte. XXH3-128 comes from hash4j (no dependencies of its own).
 *
 * <p>vLLM's default {@code sha256} and its {@code xxhash} hash a Python pickle (not reproducible
 * outside CPython's pickler): {@link #parseAlgo} refuses both with a reason. Not thread-safe (one
 * digest and one buffer per instance); cheap to create.
 */
public final class VllmBlockHash {
    /** vLLM's {@code sha256_cbor}: SHA-256 of the CBOR. */
    public static final String SHA256_CBOR = "sha256_cbor";
    /** vLLM's {@code xxhash_cbor}: XXH3-128 of the CBOR. */
    public static final String XXHASH_CBOR = "xxhash_cbor";

    /** XXH3-128 with vLLM's seed, python-xxhash's default 0; stateless and thread-safe. */
    private static final Hasher128 XXH3_128 = Hashing.xxh3_128();

    /** SHA-256 for {@code sha256_cbor}, null for {@code xxhash_cbor}. */
    private final MessageDigest sha256;
    private final byte[] noneHash;
    private final int blockSize;
    private final ByteArrayOutputStream cbor = new ByteArrayOutputStream(256);

    /**
     * @param algo {@link #SHA256_CBOR} or {@link #XXHASH_CBOR} (any case; {@link #parseAlgo} says why
     *     another is refused)
     * @param seed the engines' {@code PYTHONHASHSEED}, as the string vLLM hashes
     * @param blockSize vLLM's {@code --block-size}
     */
    public VllmBlockHash(String algo, String seed, int blockSize) {
        requireNonNull(algo, "algo");
        requireNonNull(seed, "seed");
        String refused = parseAlgo(algo);
        if (refused != null) {
            throw new IllegalArgumentException(refused);
        }
        if (blockSize < 1) {
            throw new IllegalArgumentException("blockSize must be positive, got " + blockSize);
        }
        this.blockSize = blockSize;
        this.sha256 = algo.toLowerCase(Locale.ROOT).equals(SHA256_CBOR) ? sha256() : null;
        cbor.reset();
        writeText(cbor, seed);
        this.noneHash = hash(cbor.toByteArray());
    }

    /**
     * Null when vLLM's {@code --prefix-caching-hash-algo} value {@code algo} is reproduced by this
     * class, else why not (for the operator's error message).
     */
    public static String parseAlgo(String algo) {
        return switch (algo.toLowerCase(Locale.ROOT)) {
            case SHA256_CBOR, XXHASH_CBOR -> null;
            case "sha256", "xxhash" -> "vLLM's " + algo + " hashes a Python pickle of the block, which the router "
                    + "cannot reproduce; run vLLM with --prefix-caching-hash-algo sha256_cbor or xxhash_cbor";
            default -> "unknown hash algorithm '" + algo + "' (vLLM's are sha256, sha256_cbor, xxhash, xxhash_cbor)";
        };
    }

    public int blockSize() {
        return blockSize;
    }

    /** {@code NONE_HASH}, the parent of every first block (a copy). */
    public byte[] noneHash() {
        return noneHash.clone();
    }

    /**
     * The digest (32 bytes for sha256_cbor, 16 for xxhash_cbor) of the block {@code tokens[from, from + blockSize)}
     * after {@code parentDigest} (null for the first block); {@link #blockCbor} says which extra keys.
     */
    public byte[] digest(byte[] parentDigest, int[] tokens, int from, String loraName, String cacheSalt) {
        return hash(blockCbor(parentDigest, tokens, from, loraName, cacheSalt));
    }

    /**
     * The canonical CBOR that {@link #digest} hashes: {@code cbor2.dumps((parent, tokens, extra_keys), canonical=True)}
     * with {@code extra_keys = (loraName, cacheSalt)} less a null name and a null or empty salt, None when
     * neither is left. vLLM salts the first block only: the caller passes null for every other.
     */
    public byte[] blockCbor(byte[] parentDigest, int[] tokens, int from, String loraName, String cacheSalt) {
        cbor.reset();
        cbor.write(0x83); // array(3): the tuple (parent, tokens, extra_keys)
        byte[] parent = parentDigest == null ? noneHash : parentDigest;
        writeHead(cbor, 2, parent.length); // byte string
        cbor.writeBytes(parent);
        writeHead(cbor, 4, blockSize); // array of the block's token ids
        for (int i = 0; i < blockSize; i++) {
            int t = tokens[from + i];
            if (t < 0) {
                throw new IllegalArgumentException("token id " + t + " at " + (from + i) + " is negative");
            }
            writeHead(cbor, 0, t);
        }
        boolean salted = cacheSalt != null && !cacheSalt.isEmpty(); // vLLM: `and request.cache_salt`, "" is falsy
        int extraKeys = (loraName == null ? 0 : 1) + (salted ? 1 : 0);
        if (extraKeys == 0) {
            cbor.write(0xf6); // None
        } else {
            writeHead(cbor, 4, extraKeys); // the tuple lora_extra_keys + cache_salt_keys
            if (loraName != null) {
                writeText(cbor, loraName);
            }
            if (salted) {
                writeText(cbor, cacheSalt);
            }
        }
        return cbor.toByteArray();
    }

    /**
     * The wire hashes of every full block of {@code tokens[0, length)}, first block first, for a request
     * naming {@code loraName} (null: the base model) and carrying {@code cacheSalt} (null: none), which
     * the first block alone folds in.
     */
    public long[] hashes(int[] tokens, int length, String loraName, String cacheSalt) {
        long[] out = new long[length / blockSize];
        byte[] parent = null;
        for (int b = 0; b < out.length; b++) {
            parent = digest(parent, tokens, b * blockSize, loraName, b == 0 ? cacheSalt : null);
            out[b] = wireHash(parent);
        }
        return out;
    }

    /** The digest's last 8 bytes, big-endian: vLLM's {@code maybe_convert_block_hash}. */
    public static long wireHash(byte[] digest) {
        long h = 0;
        for (int i = digest.length - Long.BYTES; i < digest.length; i++) {
            h = (h << 8) | (digest[i] & 0xff);
        }
        return h;
    }

    private byte[] hash(byte[] input) {
        if (sha256 != null) {
            return sha256.digest(input);
        }
        HashValue128 h = XXH3_128.hashBytesTo128Bits(input);
        // python-xxhash's xxh3_128_digest: the canonical (big-endian) form, high half first
        return ByteBuffer.allocate(16).putLong(h.getMostSignificantBits()).putLong(h.getLeastSignificantBits()).array();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    /** A CBOR head with the shortest argument (canonical): major type {@code major}, unsigned {@code value}. */
    static void writeHead(ByteArrayOutputStream out, int major, long value) {
        int m = major << 5;
        if (value >= 0 && value < 24) {
            out.write(m | (int) value);
        } else if (value >= 0 && value <= 0xff) {
            out.write(m | 24);
            out.write((int) value);
        } else if (value >= 0 && value <= 0xffff) {
            out.write(m | 25);
            out.write((int) (value >>> 8));
            out.write((int) value);
        } else if (value >= 0 && value <= 0xffffffffL) {
            out.write(m | 26);
            for (int s = 24; s >= 0; s -= 8) {
                out.write((int) (value >>> s));
            }
        } else {
            out.write(m | 27); // 8 bytes; a negative long is read as its unsigned value
            for (int s = 56; s >= 0; s -= 8) {
                out.write((int) (value >>> s));
            }
        }
    }

    private static void writeText(ByteArrayOutputStream out, String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        writeHead(out, 3, utf8.length);
        out.writeBytes(utf8);
    }
}
