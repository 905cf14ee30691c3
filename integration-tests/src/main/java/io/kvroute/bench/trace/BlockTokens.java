package io.kvroute.bench.trace;

import java.util.SplittableRandom;

/**
 * Turns a trace's hash ids into token ids: each id is a fixed 512-token block drawn from a
 * {@link SplittableRandom} seeded by the id alone, so the same id gives the same tokens in every run
 * and process, and a request's prompt is its blocks in order, the last one cut to the input length.
 * Two prompts therefore share exactly the token prefix their hash ids share, which is what both the
 * router's index and the engine's prefix cache key on. Ids stay inside the bundled Qwen3 tokenizer's
 * regular vocabulary. Stateless.
 */
public final class BlockTokens {

    /** Tokens per trace block (Mooncake's traces hash 512-token blocks). */
    public static final int BLOCK_TOKENS = 512;

    /** Lowest token id drawn (skips the low ids of single bytes and punctuation). */
    static final int MIN_TOKEN_ID = 1_000;

    /** One past the highest token id drawn: Qwen3's 151,643 regular tokens (special tokens follow). */
    static final int MAX_TOKEN_ID_EXCLUSIVE = 151_643;

    /** Bounds a prompt before it sizes an array (the trace's longest is 126,195 tokens). */
    static final int MAX_PROMPT_TOKENS = 1 << 20;

    private BlockTokens() {}

    /** The prompt of {@code r}: {@code inputLength} tokens, block by block. */
    public static int[] prompt(TraceRequest r) {
        int length = Math.min(r.inputLength(), Math.min(MAX_PROMPT_TOKENS, r.hashIds().length * BLOCK_TOKENS));
        int[] out = new int[length];
        for (int b = 0; b * BLOCK_TOKENS < length; b++) {
            SplittableRandom random = new SplittableRandom(r.hashIds()[b] * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L);
            int end = Math.min(length, (b + 1) * BLOCK_TOKENS);
            for (int i = b * BLOCK_TOKENS; i < end; i++) {
                out[i] = random.nextInt(MIN_TOKEN_ID, MAX_TOKEN_ID_EXCLUSIVE);
            }
        }
        return out;
    }
}
