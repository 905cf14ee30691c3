package io.kvroute.router.kvevents;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SGLang's chained page hash, so the router's query hashes equal the hashes an engine publishes
 * (sgl-project/sglang {@code python/sglang/srt/mem_cache/utils.py}: {@code get_hash_str} and
 * {@code hash_str_to_int64}; earlier in {@code mem_cache/hicache_storage.py}). Per full page of
 * {@code blockSize} tokens: {@code digest = SHA-256(parent digest (32 bytes, absent for the first
 * page) || each token as 4-byte little-endian unsigned)}; the wire hash is the digest's first 8
 * bytes read big-endian as a signed 64-bit integer ({@code int(hex[:16], 16)} folded to int64).
 * A trailing partial page has no hash (the engine caches whole pages only).
 *
 * <p>Not thread-safe (one digest per instance); cheap to create per request.
 */
public final class BlockHasher {
    private final MessageDigest sha256;
    private final byte[] pageBytes;
    private final int blockSize;

    public BlockHasher(int blockSize) {
        if (blockSize < 1) {
            throw new IllegalArgumentException("blockSize must be positive, got " + blockSize);
        }
        this.blockSize = blockSize;
        this.pageBytes = new byte[blockSize * Integer.BYTES];
        try {
            this.sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    /** The wire hashes of every full page of {@code tokens[0, length)}, first page first. */
    public long[] hashes(int[] tokens, int length) {
        int pages = length / blockSize;
        long[] out = new long[pages];
        byte[] parent = null;
        for (int p = 0; p < pages; p++) {
            int base = p * blockSize;
            for (int i = 0; i < blockSize; i++) {
                int t = tokens[base + i];
                int o = i * Integer.BYTES;
                pageBytes[o] = (byte) t;
                pageBytes[o + 1] = (byte) (t >>> 8);
                pageBytes[o + 2] = (byte) (t >>> 16);
                pageBytes[o + 3] = (byte) (t >>> 24);
            }
            if (parent != null) {
                sha256.update(parent);
            }
            sha256.update(pageBytes);
            parent = sha256.digest();
            out[p] = toWireHash(parent);
        }
        return out;
    }

    /** The first 8 bytes of a digest, big-endian, as a signed long. */
    public static long toWireHash(byte[] digest) {
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (digest[i] & 0xffL);
        }
        return v;
    }
}
