package io.kvroute.scheduler.batch;

import static java.util.Objects.requireNonNull;

import io.kvroute.scheduler.queue.SchedRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks one step's batch from an ordered ready list (LightLLM's budget loop in
 * {@code lightllm/server/router/model_infer/mode_backend/chunked_prefill/impl.py}).
 *
 * <p>Rules, in order: decode requests are charged first (one KV token and one running slot each,
 * plus one token of step budget when {@link BatchBudget#decodeSharesTokenBudget}; they always run). Then prefill requests in ready-list order, each taking at most one chunk
 * {@code min(remaining, chunkedPrefillSize)}. A chunk larger than the token budget left is
 * SKIPPED, not blocking: smaller requests behind it still go. A chunk that free KV cannot hold is
 * skipped (paused until KV frees). A request that has not started prefill needs a free running
 * slot ({@code runningMaxReqSize} minus requests already running).
 *
 * <p>Pure: reads the requests, mutates nothing; the token total it returns is what
 * {@link ProcessedPrefillCounter#onBatchSubmitted} adds, so no second pass recounts tokens.
 */
public final class PrefillBatchSelector {

    private final BatchBudget budget;

    public PrefillBatchSelector(BatchBudget budget) {
        this.budget = requireNonNull(budget, "budget");
    }

    public BatchBudget budget() {
        return budget;
    }

    /**
     * @param ordered the strategy's output (decode first)
     * @param freeKvTokens KV tokens that can be allocated this step (evictable cache counts as free)
     */
    public StepBatch select(List<SchedRequest> ordered, long freeKvTokens) {
        List<SchedRequest> decode = new ArrayList<>();
        long tokensLeft = budget.batchMaxTokens();
        long kvLeft = freeKvTokens;
        int running = 0;
        for (SchedRequest r : ordered) {
            if (r.isDecode()) {
                decode.add(r);
                if (budget.decodeSharesTokenBudget()) {
                    tokensLeft--;
                }
                kvLeft--;
                running++;
            } else if (r.prefillStarted()) {
                running++;
            }
        }
        int slotsLeft = budget.runningMaxReqSize() - running;
        List<PrefillChunk> prefill = new ArrayList<>();
        long prefillTokens = 0;
        int skippedForTokens = 0;
        int skippedForKv = 0;
        int skippedForSlots = 0;
        for (SchedRequest r : ordered) {
            if (r.isDecode()) {
                continue;
            }
            int chunk = Math.min(r.remainingPrefillTokens(), budget.chunkedPrefillSize());
            if (chunk > tokensLeft) {
                skippedForTokens++;
                continue;
            }
            if (chunk > kvLeft) {
                skippedForKv++;
                continue;
            }
            if (!r.prefillStarted()) {
                if (slotsLeft <= 0) {
                    skippedForSlots++;
                    continue;
                }
                slotsLeft--;
            }
            prefill.add(new PrefillChunk(r, chunk));
            tokensLeft -= chunk;
            kvLeft -= chunk;
            prefillTokens += chunk;
        }
        return new StepBatch(decode, prefill, prefillTokens, skippedForTokens, skippedForKv, skippedForSlots);
    }
}
