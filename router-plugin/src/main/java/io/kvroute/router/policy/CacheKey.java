package io.kvroute.router.policy;

import io.kvroute.router.prefix.KeyBuilder;
import io.kvroute.router.prefix.PrefixMatch;

/**
 * One request's prefix-index key and how its matched elements convert to tokens.
 *
 * <p>Every key starts with a negative mode sentinel (-1 tokens, -2 chars, -3 sampled): token ids
 * and code points are never negative, so in {@code auto} mode a token key can never match a
 * character key of another request, even though they share one tree. The sentinel is not counted
 * in matched lengths. Character matches convert to tokens with
 * {@link CacheAwareConfig#CHARS_PER_TOKEN}; sampled matches first to characters with LightLLM's
 * {@code min((depth - 1) * stride + 1, length)}.
 */
final class CacheKey {
    private static final int TOKENS = -1;
    private static final int CHARS = -2;
    private static final int SAMPLED = -3;

    final int[] key;
    private final int mode;
    private final int stride;
    private final int textLengthChars;

    private CacheKey(int[] key, int mode, int stride, int textLengthChars) {
        this.key = key;
        this.mode = mode;
        this.stride = stride;
        this.textLengthChars = textLengthChars;
    }

    /** The key for {@code request}, or null when the mode's input (ids or text) is missing. */
    static CacheKey of(RoutingRequest request, CacheAwareConfig config) {
        String mode = config.keyMode();
        int[] ids = request.tokenIds();
        String text = request.routingText();
        if (mode.equals(CacheAwareConfig.MODE_AUTO)) {
            mode = ids != null ? CacheAwareConfig.MODE_TOKENS : CacheAwareConfig.MODE_SAMPLED;
        }
        switch (mode) {
            case CacheAwareConfig.MODE_TOKENS:
                return ids == null ? null : new CacheKey(withSentinel(TOKENS, ids), TOKENS, 1, 0);
            case CacheAwareConfig.MODE_CHARS:
                return text == null ? null
                        : new CacheKey(withSentinel(CHARS, KeyBuilder.codePoints(text)), CHARS, 1, text.length());
            default:
                return text == null ? null : new CacheKey(
                        withSentinel(SAMPLED, KeyBuilder.sampled(text, config.sampleStride())), SAMPLED,
                        config.sampleStride(), text.length());
        }
    }

    /** Matched key elements of the worker, sentinel excluded. */
    int matchedElements(PrefixMatch match, String workerId) {
        return Math.max(0, match.matchedLength(workerId) - 1);
    }

    /** Fraction of the key (sentinel excluded) the worker holds. */
    double matchRatio(int matchedElements) {
        int length = key.length - 1;
        return length <= 0 ? 0.0 : (double) matchedElements / length;
    }

    /** Matched elements as tokens (exact in tokens mode, estimated otherwise). */
    long toTokens(int matchedElements) {
        switch (mode) {
            case TOKENS:
                return matchedElements;
            case CHARS:
                return matchedElements / CacheAwareConfig.CHARS_PER_TOKEN;
            default:
                return KeyBuilder.sampledDepthToChars(matchedElements, stride, textLengthChars)
                        / CacheAwareConfig.CHARS_PER_TOKEN;
        }
    }

    private static int[] withSentinel(int sentinel, int[] elements) {
        int[] out = new int[elements.length + 1];
        out[0] = sentinel;
        System.arraycopy(elements, 0, out, 1, elements.length);
        return out;
    }
}
