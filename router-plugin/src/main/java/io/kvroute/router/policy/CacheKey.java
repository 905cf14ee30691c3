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
 *
 * <p><b>Adapter scope.</b> A request for a LoRA adapter gets {@link #ADAPTER_HEADER} negative
 * elements (a 62-bit hash of the adapter name) in front of its key; a base-model key has none.
 * Every real element (token id, code point) is non-negative, so two keys of different adapters, or
 * of an adapter and the base model, part at the root and never count as each other's hit, as in
 * the engine, whose block hashes include the adapter (vLLM {@code vllm/v1/core/kv_cache_utils.py}
 * {@code _gen_lora_extra_hash_keys}). The header is not part of the prompt: {@link #toTokens} and
 * {@link #matchRatio} discount it. Such keys lose the byte form (a cost only adapter requests pay).
 */
final class CacheKey {
    /** Index slots, one per key kind; also the order of {@link #MODE_NAMES}. */
    static final int TOKENS = 0;
    static final int CHARS = 1;
    static final int SAMPLED = 2;
    static final String[] MODE_NAMES = {
        CacheAwareConfig.MODE_TOKENS, CacheAwareConfig.MODE_CHARS, CacheAwareConfig.MODE_SAMPLED,
    };

    /** Elements an adapter-scoped key carries in front of the prompt's. */
    static final int ADAPTER_HEADER = 2;

    final PrefixKey key;
    final int mode;
    /** Leading elements that name the adapter, not the prompt: 0 or {@link #ADAPTER_HEADER}. */
    final int headerElements;
    private final int stride;
    private final int textLengthChars;

    private CacheKey(PrefixKey key, int mode, int stride, int textLengthChars) {
        this(key, mode, stride, textLengthChars, 0);
    }

    private CacheKey(PrefixKey key, int mode, int stride, int textLengthChars, int headerElements) {
        this.key = key;
        this.mode = mode;
        this.stride = stride;
        this.textLengthChars = textLengthChars;
        this.headerElements = headerElements;
    }

    /** The key for {@code request}, scoped to its adapter when it names one. */
    static CacheKey of(RoutingRequest request, CacheAwareConfig config) {
        CacheKey base = baseKey(request, config);
        String adapter = request.adapter();
        if (base == null || adapter == null) {
            return base;
        }
        int[] prompt = base.key.elements();
        int[] scoped = new int[prompt.length + ADAPTER_HEADER];
        long h = adapterHash(adapter);
        scoped[0] = (int) (h >>> 31) | Integer.MIN_VALUE;
        scoped[1] = (int) h | Integer.MIN_VALUE;
        System.arraycopy(prompt, 0, scoped, ADAPTER_HEADER, prompt.length);
        return new CacheKey(PrefixKey.of(scoped), base.mode, base.stride, base.textLengthChars, ADAPTER_HEADER);
    }

    /** FNV-1a over the name's UTF-16 units, mixed: 62 bits land in the two header elements. */
    static long adapterHash(String adapter) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < adapter.length(); i++) {
            h = (h ^ adapter.charAt(i)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        return h ^ (h >>> 33);
    }

    /** The unscoped key for {@code request}, or null when the mode's input (ids or text) is missing. */
    private static CacheKey baseKey(RoutingRequest request, CacheAwareConfig config) {
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
        int length = key.length() - headerElements;
        return length <= 0 ? 0.0 : (double) Math.max(0, matchedElements - headerElements) / length;
    }

    /** True when a match of {@code matchedElements} covers none of the prompt (at most the adapter header). */
    boolean nothingMatched(int matchedElements) {
        return matchedElements <= headerElements;
    }

    /** Matched elements as tokens (exact in tokens mode, estimated otherwise). */
    long toTokens(int matchedElements) {
        matchedElements = Math.max(0, matchedElements - headerElements);
        if (matchedElements == 0) {
            return 0;
        }
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
