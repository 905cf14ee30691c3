package io.kvroute.scheduler.engine;

import static java.util.Objects.requireNonNull;

import io.kvroute.scheduler.batch.BatchBudget;
import io.kvroute.scheduler.batch.PrefillBatchSelector;
import io.kvroute.scheduler.batch.ProcessedPrefillCounter;
import io.kvroute.scheduler.batch.StepBatch;
import io.kvroute.scheduler.queue.PrefillQueueStrategy;
import io.kvroute.scheduler.queue.SchedRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One engine's step scheduling, the part an engine's loop calls: it creates requests stamped with
 * the processed-prefill counter, turns the step's ready list into an ordered, budgeted batch (the
 * prefill queue strategy, then the token/KV/running-slot budget loop), and advances the counter
 * by the batch the engine actually submitted. The engine keeps its own queue, KV and execution.
 *
 * <p>Not thread-safe: owned by the engine thread, like the step loop that calls it.
 */
public final class StepScheduler {

    private final PrefillQueueStrategy strategy;
    private final PrefillBatchSelector selector;
    private final ProcessedPrefillCounter counter = new ProcessedPrefillCounter();

    private StepScheduler(PrefillQueueStrategy strategy, BatchBudget budget) {
        this.strategy = requireNonNull(strategy, "strategy");
        this.selector = new PrefillBatchSelector(requireNonNull(budget, "budget"));
    }

    /**
     * @param strategyName {@code default}, {@code promote_shortest} or {@code hrrn}
     * @throws IllegalArgumentException naming the choices on an unknown strategy
     */
    public static StepScheduler create(String strategyName, BatchBudget budget) {
        return new StepScheduler(PrefillQueueStrategy.forName(strategyName), budget);
    }

    /** A request as the engine admits it, stamped with the counter now (its HRRN arrival). */
    public SchedRequest admit(String requestId, int inputLen, int maxNewTokens, boolean highPriorityRequest,
            int segmentIndex) {
        return SchedRequest.create(requestId, inputLen, maxNewTokens, highPriorityRequest, segmentIndex,
                counter.value());
    }

    /** The ready list in the strategy's order: a permutation, the input untouched. */
    public List<SchedRequest> order(List<SchedRequest> ready) {
        return strategy.reorder(ready, counter.value());
    }

    /** Orders the ready list and selects this step's batch within the budgets and {@code freeKvTokens}. */
    public StepBatch nextBatch(List<SchedRequest> ready, long freeKvTokens) {
        return selector.select(order(ready), freeKvTokens);
    }

    /** Batch accounting: the engine submitted {@code batch} to its forward pass. */
    public void submitted(StepBatch batch) {
        counter.onBatchSubmitted(batch);
    }

    /** Prefill tokens submitted so far (the HRRN clock). */
    public long processedPrefillTokens() {
        return counter.value();
    }

    public String strategyName() {
        return strategy.name();
    }

    public BatchBudget budget() {
        return selector.budget();
    }

    /** Strategy and budgets for {@code /scheduler}, with JSON-friendly snake_case keys. */
    public Map<String, Object> describe() {
        BatchBudget b = selector.budget();
        Map<String, Object> budgets = new LinkedHashMap<>();
        budgets.put("batch_max_tokens", b.batchMaxTokens());
        budgets.put("chunked_prefill_size", b.chunkedPrefillSize());
        budgets.put("running_max_req_size", b.runningMaxReqSize());
        budgets.put("decode_shares_token_budget", b.decodeSharesTokenBudget());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("strategy", strategy.name());
        out.put("budgets", budgets);
        out.put("processed_prefill_tokens", counter.value());
        return out;
    }
}
