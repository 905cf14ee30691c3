package io.kvroute.scheduler.batch;

import static java.util.Objects.requireNonNull;

import io.kvroute.scheduler.queue.SchedRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * SGLang's step with mixed chunked prefill ({@code --enable-mixed-chunk}): every running decode
 * request rides in the step's one forward pass with a new prefill batch built by the
 * {@code PrefillAdder} ({@code managers/scheduler.py} {@code get_new_batch_prefill}, which passes
 * {@code running_bs} as {@code mixed_with_decode_tokens}; {@code managers/schedule_policy.py}
 * {@code PrefillAdder}, {@code add_chunked_req}, {@code add_one_req}).
 *
 * <p>Rules: decode requests are charged first (one token, one KV token and one running slot each).
 * The prefill token budget is {@code min(chunkedPrefillSize, batchMaxTokens) - decode requests}
 * ({@code rem_chunk_tokens} and {@code rem_input_tokens} both start reduced by the running batch).
 * The request already mid-prefill (SGLang's single {@code chunked_req}) goes first, then the
 * strategy's order. A request whose uncached prompt fits is taken whole; one that does not is
 * truncated to the budget left and becomes the next chunked request, and the batch is closed
 * (SGLang chunks only one request at a time). A request that free KV or a free running slot cannot
 * hold also closes the batch ({@code AddReqResult.NO_TOKEN} / {@code OTHER}: {@code break}, not skip).
 *
 * <p>Pure: reads the requests, mutates nothing.
 */
public final class MixedChunkSelector {

    private final BatchBudget budget;

    public MixedChunkSelector(BatchBudget budget) {
        this.budget = requireNonNull(budget, "budget");
    }

    /**
     * @param ordered the strategy's output (decode first, then prefill requests in strategy order)
     * @param freeKvTokens KV tokens that can be allocated this step
     */
    public StepBatch select(List<SchedRequest> ordered, long freeKvTokens) {
        List<SchedRequest> decode = new ArrayList<>();
        List<SchedRequest> prefillOrder = new ArrayList<>(ordered.size());
        long kvLeft = freeKvTokens;
        int running = 0;
        for (SchedRequest r : ordered) {
            if (r.isDecode()) {
                decode.add(r);
                kvLeft--;
                running++;
            } else if (r.prefillStarted()) {
                running++;
                prefillOrder.add(0, r); // the chunked request continues first
            } else {
                prefillOrder.add(r);
            }
        }
        long tokensLeft = (long) Math.min(budget.chunkedPrefillSize(), budget.batchMaxTokens()) - decode.size();
        int slotsLeft = budget.runningMaxReqSize() - running;
        List<PrefillChunk> prefill = new ArrayList<>();
        long prefillTokens = 0;
        int skippedForTokens = 0;
        int skippedForKv = 0;
        int skippedForSlots = 0;
        for (int i = 0; i < prefillOrder.size(); i++) {
            SchedRequest r = prefillOrder.get(i);
            int left = prefillOrder.size() - i;
            if (tokensLeft <= 0) {
                skippedForTokens += left;
                break;
            }
            int take = (int) Math.min(r.remainingPrefillTokens(), tokensLeft);
            if (take > kvLeft) {
                skippedForKv += left;
                break;
            }
            if (!r.prefillStarted()) {
                if (slotsLeft <= 0) {
                    skippedForSlots += left;
                    break;
                }
                slotsLeft--;
            }
            prefill.add(new PrefillChunk(r, take));
            tokensLeft -= take;
            kvLeft -= take;
            prefillTokens += take;
            if (take < r.remainingPrefillTokens()) {
                skippedForTokens += left - 1; // truncated: the new chunked request closes the batch
                break;
            }
        }
        return new StepBatch(decode, prefill, prefillTokens, skippedForTokens, skippedForKv, skippedForSlots);
    }
}
