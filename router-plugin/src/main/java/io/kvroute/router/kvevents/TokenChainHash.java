package io.kvroute.router.kvevents;

/**
 * The router's OWN chained block hash over token ids, for engines whose block hashes the router
 * cannot reproduce (vLLM seeds its hash chain with a per-process random value, vLLM
 * {@code vllm/v1/core/kv_cache_utils.py}). Blocks of such engines are keyed by this hash of the event's {@code token_ids}
 * ({@link TokenKeying}), and a request's tokens are hashed with the SAME function here
 * ({@link #hashes}), so the two sides meet in the {@link BlockIndex}. Dynamo keys its radix tree the
 * same way (a per-block hash of the tokens, chained with the parent's sequence hash).
 *
 * <p>Per full block of {@code blockSize} tokens: {@code own = next(parentOwn, tokens)} with
 * {@code parentOwn = root(loraId)} for the first block. The adapter is folded into the root so the
 * same tokens under two adapters are two chains (a BlockRemoved must not clear the other one).
 * {@code next} is a 64-bit multiply-rotate hash (murmur3's 64-bit mixing steps) over the parent
 * and the tokens, two tokens per 64-bit word, finished with murmur3's {@code fmix64}. It is not a
 * cryptographic hash: a client who crafts a colliding prompt can at worst make the router believe
 * a worker holds its prefix (a slower request), never read another tenant's KV (the engine matches
 * by its own hash). Chosen over SHA-256 because both the events thread (every stored block) and
 * each request (every prompt block) pay it: one multiply chain per 8 bytes instead of a
 * 64-round compression per 64 bytes.
 *
 * <p>Stateless and thread-safe.
 */
public final class TokenChainHash {
    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;
    /** Root of the chain for "no adapter"; other adapters mix their id into it. */
    private static final long ROOT_SEED = 0x6b76726f75746531L; // "kvroute1"

    private TokenChainHash() {}

    /** The parent value of an adapter's first block ({@code loraId} -1 for none). */
    public static long root(long loraId) {
        return fmix64(ROOT_SEED ^ (loraId * C2));
    }

    /** The own hash of the block {@code tokens[from, from + blockSize)} whose parent's own hash is {@code parent}. */
    public static long next(long parent, int[] tokens, int from, int blockSize) {
        long h = parent ^ C1;
        int i = from;
        int end = from + blockSize;
        for (; i + 1 < end; i += 2) {
            h = round(h, (tokens[i] & 0xffffffffL) | ((long) tokens[i + 1] << 32));
        }
        if (i < end) {
            h = round(h, (tokens[i] & 0xffffffffL) | 0x5a5a5a5a00000000L); // an odd tail differs from a 0 token
        }
        return fmix64(h ^ blockSize);
    }

    /** {@code own} keyed apart by a non-zero {@code salt} (a block's extra keys); a different chain from there on. */
    static long salted(long own, long salt) {
        return fmix64(round(own ^ C2, salt));
    }

    /** The own hashes of every full block of {@code tokens[0, length)}, first block first, for adapter {@code loraId}. */
    public static long[] hashes(int[] tokens, int length, int blockSize, long loraId) {
        return hashes(tokens, length, blockSize, loraId, 0);
    }

    /**
     * As {@link #hashes(int[], int, int, long)}, the first block {@link #salted} with {@code firstBlockSalt} when it
     * is not 0 (a vLLM request's {@code cache_salt}, which vLLM adds to its first block's extra keys), so the chain
     * is the one {@link TokenKeying} stores for that request's blocks.
     */
    public static long[] hashes(int[] tokens, int length, int blockSize, long loraId, long firstBlockSalt) {
        if (blockSize < 1) {
            throw new IllegalArgumentException("blockSize must be positive, got " + blockSize);
        }
        int blocks = length / blockSize;
        long[] out = new long[blocks];
        long parent = root(loraId);
        for (int b = 0; b < blocks; b++) {
            parent = next(parent, tokens, b * blockSize, blockSize);
            if (b == 0 && firstBlockSalt != 0) {
                parent = salted(parent, firstBlockSalt);
            }
            out[b] = parent;
        }
        return out;
    }

    private static long round(long h, long k) {
        k *= C1;
        k = Long.rotateLeft(k, 31);
        k *= C2;
        h ^= k;
        h = Long.rotateLeft(h, 27);
        return h * 5 + 0x52dce729;
    }

    private static long fmix64(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}
