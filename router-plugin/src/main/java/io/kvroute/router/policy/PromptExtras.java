package io.kvroute.router.policy;

/**
 * What a request carries, besides its tokens and its adapter, that vLLM folds into the prefix-cache
 * hashes of its blocks, read once at ingress. vLLM's extra keys per block are
 * {@code lora_extra_keys + mm_extra_keys + cache_salt_keys + prompt_embeds_keys} (vLLM
 * {@code vllm/v1/core/kv_cache_utils.py}, {@code generate_block_hash_extra_keys}): the adapter's name
 * (carried apart, as {@link RoutingRequest#adapter()}), the hash of every multimodal item a block
 * overlaps, the request's {@code cache_salt} on the first block only, and a SHA-256 of the block's
 * prompt embeddings. The salt is a string the router can hash as vLLM does; multimodal item hashes and
 * embedding hashes come from the decoded media and tensors, which it cannot, so an exact lookup keyed by
 * the engine's own hashes is declined for such a request (counted with {@link #unhashable()} as the
 * reason) instead of answering for hashes the engine never computed. Immutable.
 *
 * @param cacheSalt the request's {@code cache_salt} string, or null when absent, JSON null or not a
 *     string vLLM would accept
 * @param unhashable why vLLM's block hashes of this request cannot be computed ({@link #MULTIMODAL},
 *     {@link #PROMPT_EMBEDS}), or null when they can
 */
public record PromptExtras(String cacheSalt, String unhashable) {
    /** A plain request: nothing beyond its tokens (and adapter). */
    public static final PromptExtras NONE = new PromptExtras(null, null);
    /** A chat message content part other than text (an image, audio or video): vLLM's {@code mm_extra_keys}. */
    public static final String MULTIMODAL = "multimodal";
    /** {@code prompt_embeds} on a completion: vLLM's {@code prompt_embeds_keys}. */
    public static final String PROMPT_EMBEDS = "prompt_embeds";

    /** This request's extras, or {@link #NONE} when it carries none. */
    public static PromptExtras of(String cacheSalt, String unhashable) {
        return cacheSalt == null && unhashable == null ? NONE : new PromptExtras(cacheSalt, unhashable);
    }
}
