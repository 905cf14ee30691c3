package io.kvroute.router.policy;

import io.kvroute.router.prefix.KeyBuilder;
import io.kvroute.router.prefix.PrefixKey;

/**
 * One request's prefix-index key, which of the policy's indexes it belongs to, and how its matched
 * elements convert to tokens.
 *
 * <p>Each key kind (token ids, code points, sampled code points) has its own index, so in
 * {@code auto} mode a token key can never match a character key of another request, and a sampled
 * key of ASCII/Latin-1 text keeps its byte form (every element in 0..255): its edges compare with
 * the vectorized byte compare. (An in-key mode sentinel, the earlier design, was negative and so
 * ruled the byte form out for every key.) Character matches convert to tokens with
 * {@link CacheAwareConfig#CHARS_PER_TOKEN}; sampled matches first to characters with LightLLM's
 * {@code min((depth - 1) * stride + 1, length)}.
 */
final class CacheKey {
    /** Index slots, one per key kind; also the order of {@link #MODE_NAMES}. */
    static final int TOKENS = 0;
    static final int CHARS = 1;
    static final int SAMPLED = 2;
    static final String[] MODE_NAMES = {
        CacheAwareConfig.MODE_TOKENS, CacheAwareConfig.MODE_CHARS, CacheAwareConfig.MODE_SAMPLED,
    };

    final PrefixKey key;
    final int mode;
    private final int stride;
    private final int textLengthChars;

    private CacheKey(PrefixKey key, int mode, int stride, int textLengthChars) {
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
                return ids == null ? null : new CacheKey(PrefixKey.of(ids), TOKENS, 1, 0);
            case CacheAwareConfig.MODE_CHARS:
                return text == null ? null
                        : new CacheKey(PrefixKey.of(KeyBuilder.codePoints(text)), CHARS, 1, text.length());
            default:
                return text == null ? null : new CacheKey(
                        KeyBuilder.sampledKey(text, config.sampleStride()), SAMPLED, config.sampleStride(),
                        text.length());
        }
    }

    /** Which key kinds a policy in {@code keyMode} can produce (the indexes it needs). */
    static boolean[] modesUsed(String keyMode) {
        boolean[] used = new boolean[MODE_NAMES.length];
        switch (keyMode) {
            case CacheAwareConfig.MODE_AUTO -> {
                used[TOKENS] = true;
                used[SAMPLED] = true;
            }
            case CacheAwareConfig.MODE_TOKENS -> used[TOKENS] = true;
            case CacheAwareConfig.MODE_CHARS -> used[CHARS] = true;
            default -> used[SAMPLED] = true;
        }
        return used;
    }

    /** Fraction of the key the worker holds. */
    double matchRatio(int matchedElements) {
        int length = key.length();
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
}
