package io.kvroute.scheduler.batch;

import io.kvroute.scheduler.queue.SchedRequest;
import java.util.List;

/**
 * What one engine step executes.
 *
 * @param decode decode requests, one token each, in ready-list order
 * @param prefill prompt chunks, in ready-list order
 * @param prefillTokens sum of the chunks' tokens: exactly what the counter advances by on submit
 * @param skippedForTokens prefill requests skipped because their chunk exceeded the token budget left
 * @param skippedForKv prefill requests paused because free KV could not hold their chunk
 * @param skippedForSlots prefill requests not started because every running slot was taken
 */
public record StepBatch(List<SchedRequest> decode, List<PrefillChunk> prefill, long prefillTokens,
        int skippedForTokens, int skippedForKv, int skippedForSlots) {

    public StepBatch {
        decode = List.copyOf(decode);
        prefill = List.copyOf(prefill);
    }

    public boolean isEmpty() {
        return decode.isEmpty() && prefill.isEmpty();
    }

    /** A mixed batch holds both decode tokens and prefill chunks. */
    public boolean isMixed() {
        return !decode.isEmpty() && !prefill.isEmpty();
    }
}
