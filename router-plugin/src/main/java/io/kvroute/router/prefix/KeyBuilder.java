package io.kvroute.router.prefix;

import static java.util.Objects.requireNonNull;

/**
 * Builds {@link PrefixIndex} keys: token ids (exact, as the engine's KV cache sees them), every
 * code point (SGLang's char tree, non-BMP characters count once), or one code point every
 * {@code stride} (LightLLM's {@code text[::sample_stride]}, default stride 512).
 */
public final class KeyBuilder {
    /** LightLLM's default sample_stride. */
    public static final int DEFAULT_SAMPLE_STRIDE = 512;

    private KeyBuilder() {}

    public static int[] tokens(int[] ids) {
        return requireNonNull(ids, "ids").clone();
    }

    public static int[] codePoints(String text) {
        return requireNonNull(text, "text").codePoints().toArray();
    }

    /**
     * Code point {@code i} is kept when {@code i % stride == 0}. O(length / stride) for Latin-1
     * strings (their code point count is their length, answered without a scan by the JDK's
     * compact strings); one O(length) pass otherwise.
     */
    public static int[] sampled(String text, int stride) {
        requireNonNull(text, "text");
        if (stride < 1) {
            throw new IllegalArgumentException("stride must be >= 1, got " + stride);
        }
        int chars = text.length();
        int codePoints = text.codePointCount(0, chars);
        int samples = (int) ((codePoints + (long) stride - 1) / stride);
        int[] out = new int[samples];
        if (codePoints == chars) { // no surrogate pairs: char index == code point index
            for (int k = 0, i = 0; k < samples; k++, i += stride) {
                out[k] = text.charAt(i);
            }
            return out;
        }
        int index = 0;
        int cp = 0;
        int k = 0;
        while (index < chars) {
            int c = text.codePointAt(index);
            if (cp % stride == 0) {
                out[k++] = c;
            }
            index += Character.charCount(c);
            cp++;
        }
        return out;
    }

    /**
     * Characters covered by a sampled match of {@code depth} samples:
     * {@code min((depth - 1) * stride + 1, textLengthChars)}, 0 when depth is 0 (LightLLM's hit
     * estimate).
     */
    public static int sampledDepthToChars(int depth, int stride, int textLengthChars) {
        if (depth <= 0) {
            return 0;
        }
        return (int) Math.min((long) (depth - 1) * stride + 1, textLengthChars);
    }
}
