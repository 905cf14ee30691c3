package io.kvroute.scheduler.admission;

import java.util.function.ToIntFunction;

/**
 * LightLLM's pending-first-chunk gate: the router moves waiting requests into the engine only while
 * the step work it has already sent plus the new requests' first chunks fit twice
 * {@code batch_max_tokens}, and stops at the first request that does not fit
 * ({@code router/req_queue/chunked_prefill/impl.py}: {@code ChunkedPrefillQueue} doubles
 * {@code batch_max_tokens}; {@code generate_new_batch} starts from the running batch's
 * {@code get_batch_decode_need_tokens()} and {@code _can_add_new_req} adds each request's
 * {@code get_first_router_need_tokens()}, breaking on the first refusal; {@code core/objs/req.py}
 * {@code ChunkedPrefillReq}: a running request needs {@code min(input + output - kv, chunk)}, a new
 * one {@code min(input + output, chunk)}, prefix-cache hits not subtracted).
 *
 * <p>One instance serves one poll: build it with the running requests' need, then offer pending
 * requests head-first. Plain state, engine thread only.
 */
public final class FirstChunkBudget<T> implements EntryBudget<T> {

    private final long limitTokens;
    private final ToIntFunction<T> firstChunkTokens;
    private long usedTokens;

    /**
     * @param limitTokens {@code 2 x batch_max_tokens}
     * @param runningNeedTokens the sum of the running requests' next-step need
     * @param firstChunkTokens a pending request's {@code min(input_len, chunked_prefill_size)}
     */
    public FirstChunkBudget(long limitTokens, long runningNeedTokens, ToIntFunction<T> firstChunkTokens) {
        if (limitTokens < 1) {
            throw new IllegalArgumentException("first-chunk limit must be >= 1: " + limitTokens);
        }
        this.limitTokens = limitTokens;
        this.usedTokens = runningNeedTokens;
        this.firstChunkTokens = firstChunkTokens;
    }

    /** A running request's need: {@code min(prompt and output tokens without KV, chunk)}, 1 when decoding. */
    public static int runningNeedTokens(int tokensWithoutKv, int chunkedPrefillSize) {
        return Math.min(tokensWithoutKv, chunkedPrefillSize);
    }

    @Override
    public boolean tryEnter(T request) {
        long after = usedTokens + firstChunkTokens.applyAsInt(request);
        if (after > limitTokens) {
            return false;
        }
        usedTokens = after;
        return true;
    }

    public long usedTokens() {
        return usedTokens;
    }
}
