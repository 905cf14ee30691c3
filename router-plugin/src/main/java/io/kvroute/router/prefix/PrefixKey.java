package io.kvroute.router.prefix;

import static java.util.Objects.requireNonNull;

/**
 * A {@link PrefixIndex} key prepared for comparison: the {@code int[]} elements and, when every
 * element is in 0..255 (sampled ASCII/Latin-1 text), the same elements as a {@code byte[]}. Byte
 * edges (how the tree stores such text) then compare with the vectorized
 * {@code Arrays.mismatch(byte[], ...)} instead of a scalar int-vs-byte loop.
 *
 * <p>Why a separate type: building the byte form from an {@code int[]} costs as much as the
 * compare it saves. C2 on JDK 17 does not vectorize the int-to-byte cast or the range check:
 * {@link #narrow} took 1.0-1.6 us per 1,024 elements on the 2-vCPU bench box (load ~8), and
 * {@code PrefixPathBench.fullMatch} went from 1.01 us to only 0.95 us when every {@code match(int[])}
 * narrowed its key. So the byte form is built where it is nearly free, in the sampling loop
 * ({@link KeyBuilder#sampledKey}), or once for a key that is used many times ({@link #of}).
 *
 * <p>Immutable as long as the wrapped array is not modified; the {@code int[]} overloads of
 * {@link PrefixIndex} wrap without a byte form.
 */
public final class PrefixKey {
    private static final int BLOCK = 256;

    final int[] ints;
    /** Null when some element is outside 0..255 (or the byte form was not built). */
    final byte[] bytes;

    private PrefixKey(int[] ints, byte[] bytes) {
        this.ints = ints;
        this.bytes = bytes;
    }

    /**
     * Wraps {@code elements} (not copied: do not modify it while the key is in use) and builds the
     * byte form when every element fits, an O(length) pass: worth it for a key matched or
     * inserted more than once.
     */
    public static PrefixKey of(int[] elements) {
        requireNonNull(elements, "elements");
        return new PrefixKey(elements, narrow(elements));
    }

    /** Wraps without a byte form (what the {@code int[]} overloads of {@link PrefixIndex} use). */
    static PrefixKey wrap(int[] key) {
        return new PrefixKey(key, null);
    }

    /** Both forms built together by the caller (same elements). */
    static PrefixKey of(int[] key, byte[] bytes) {
        return new PrefixKey(key, bytes);
    }

    public int length() {
        return ints.length;
    }

    /** A copy of the elements. */
    public int[] elements() {
        return ints.clone();
    }

    /** The byte form, or null. Rejects a token key after its first block without allocating. */
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

    @Override
    public String toString() {
        return "PrefixKey{length=" + ints.length + ", bytes=" + (bytes != null) + "}";
    }
}
