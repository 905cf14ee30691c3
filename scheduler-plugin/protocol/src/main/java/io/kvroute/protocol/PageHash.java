package io.kvroute.protocol;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SGLang's chained page hash, the key of a KV block in the engine's events and in the router's
 * exact index (sgl-project/sglang {@code python/sglang/srt/mem_cache/utils.py}: {@code get_hash_str}
 * and {@code hash_str_to_int64}). Per full page of {@code pageSize} tokens:
 * {@code digest = SHA-256(parent digest (32 bytes, absent for the first page) || each token as
 * 4-byte little-endian)}; the wire hash is the digest's first 8 bytes read big-endian as a signed
 * 64-bit integer ({@code int(hex[:16], 16)} folded to int64). A trailing partial page has no hash
 * (the engine caches whole pages only).
 *
 * <p>The engine side (the scheduler's publisher, the mock engine's prefix cache) chains
 * {@link #digest}s page by page as it caches them; the router hashes a request's tokens with
 * {@link #hashes}. Both are this one implementation. Not thread-safe (one digest per instance);
 * cheap to create.
 */
public final class PageHash {
    private final MessageDigest sha256;
    private final byte[] pageBytes;
    private final int pageSize;

    public PageHash(int pageSize) {
        if (pageSize < 1) {
            throw new IllegalArgumentException("pageSize must be positive, got " + pageSize);
        }
        this.pageSize = pageSize;
        this.pageBytes = new byte[pageSize * Integer.BYTES];
        try {
            this.sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    public int pageSize() {
        return pageSize;
    }

    /** The 32-byte digest of the page {@code tokens[from, from + pageSize)} after {@code parentDigest} (null at the root). */
    public byte[] digest(byte[] parentDigest, int[] tokens, int from) {
        for (int i = 0; i < pageSize; i++) {
            int t = tokens[from + i];
            int o = i * Integer.BYTES;
            pageBytes[o] = (byte) t;
            pageBytes[o + 1] = (byte) (t >>> 8);
            pageBytes[o + 2] = (byte) (t >>> 16);
            pageBytes[o + 3] = (byte) (t >>> 24);
        }
        if (parentDigest != null) {
            sha256.update(parentDigest);
        }
        sha256.update(pageBytes);
        return sha256.digest();
    }

    /** The wire hashes of every full page of {@code tokens[0, length)}, first page first. */
    public long[] hashes(int[] tokens, int length) {
        int pages = length / pageSize;
        long[] out = new long[pages];
        byte[] parent = null;
        for (int p = 0; p < pages; p++) {
            parent = digest(parent, tokens, p * pageSize);
            out[p] = wireHash(parent);
        }
        return out;
    }

    /** The wire hash of a digest: its first 8 bytes, big-endian, as a signed long. */
    public static long wireHash(byte[] digest) {
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (digest[i] & 0xffL);
        }
        return v;
    }
}
