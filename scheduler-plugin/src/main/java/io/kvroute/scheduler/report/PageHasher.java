package io.kvroute.scheduler.report;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SGLang's page hash, for engines that publish KV events a router can reproduce from a request's
 * tokens (sgl-project/sglang {@code python/sglang/srt/mem_cache/utils.py}, {@code get_hash_str} and
 * {@code hash_str_to_int64}): {@code digest = SHA-256(parent digest || tokens as 4-byte LE)}; the
 * event hash is the digest's first 8 bytes, big-endian, signed. Not thread-safe.
 */
public final class PageHasher {
    private final MessageDigest sha256;

    public PageHasher() {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    /** The 32-byte digest of the page {@code tokens[from, from + pageSize)} after {@code parentDigest} (null at the root). */
    public byte[] digest(byte[] parentDigest, int[] tokens, int from, int pageSize) {
        if (parentDigest != null) {
            sha256.update(parentDigest);
        }
        byte[] page = new byte[pageSize * Integer.BYTES];
        for (int i = 0; i < pageSize; i++) {
            int t = tokens[from + i];
            page[i * 4] = (byte) t;
            page[i * 4 + 1] = (byte) (t >>> 8);
            page[i * 4 + 2] = (byte) (t >>> 16);
            page[i * 4 + 3] = (byte) (t >>> 24);
        }
        sha256.update(page);
        return sha256.digest();
    }

    /** The event hash of a digest: its first 8 bytes, big-endian, as a signed long. */
    public static long eventHash(byte[] digest) {
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (digest[i] & 0xffL);
        }
        return v;
    }
}
