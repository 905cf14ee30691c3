package io.kvroute.router.prefix;

/**
 * A lookup key in the two forms the tree compares against: the caller's {@code int[]} and, when
 * every element is in 0..255 (sampled ASCII/Latin-1 text), a {@code byte[]} copy so that byte edges
 * compare with the vectorized {@code Arrays.mismatch(byte[], ...)} instead of a scalar
 * int-vs-byte loop. Built once per request (match, then reused by insertMatched); immutable.
 */
final class Key {
    private static final int BLOCK = 256;

    final int[] ints;
    /** Null when some element is outside 0..255. */
    final byte[] bytes;

    private Key(int[] ints, byte[] bytes) {
        this.ints = ints;
        this.bytes = bytes;
    }

    /**
     * Wraps a caller's int key without a byte form. Narrowing per request was measured and is not
     * worth it on JDK 17: C2 does not vectorize the int-to-byte cast or the OR check, so
     * {@link #narrow} costs 1.0-1.6 us per 1,024 elements on this box (Scratch timing, load ~8),
     * as much as the scalar int-vs-byte compare it would replace (PrefixPathBench.fullMatch
     * 1.01 us before, 0.95 us with per-request narrowing).
     */
    static Key of(int[] key) {
        return new Key(key, null);
    }

    /** A key whose byte form was built with it (same elements), e.g. while sampling a String. */
    static Key of(int[] key, byte[] bytes) {
        return new Key(key, bytes);
    }

    /**
     * The byte form, or null. Works in blocks (OR-check, then cast) so a token key is rejected
     * after its first block without allocating; both inner loops are simple enough for C2 to
     * vectorize.
     */
    static byte[] narrow(int[] key) {
        int n = key.length;
        if (n == 0 || !fitsInBytes(key, 0, Math.min(n, BLOCK))) {
            return null;
        }
        byte[] out = new byte[n];
        for (int from = 0; from < n; from += BLOCK) {
            int to = Math.min(n, from + BLOCK);
            if (from > 0 && !fitsInBytes(key, from, to)) {
                return null;
            }
            for (int i = from; i < to; i++) {
                out[i] = (byte) key[i];
            }
        }
        return out;
    }

    private static boolean fitsInBytes(int[] key, int from, int to) {
        int acc = 0;
        for (int i = from; i < to; i++) {
            acc |= key[i];
        }
        return (acc & ~0xFF) == 0;
    }
}
