package io.kvroute.scheduler.engine;

import static java.util.Objects.requireNonNull;

import io.kvroute.scheduler.admission.EntryBudget;
import io.kvroute.scheduler.admission.FirstChunkBudget;
import io.kvroute.scheduler.batch.BatchBudget;
import io.kvroute.scheduler.batch.MixedChunkSelector;
import io.kvroute.scheduler.batch.PrefillBatchSelector;
import io.kvroute.scheduler.batch.ProcessedPrefillCounter;
import io.kvroute.scheduler.batch.StepBatch;
import io.kvroute.scheduler.queue.PrefillQueueStrategy;
import io.kvroute.scheduler.queue.SchedRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * One engine's step scheduling, the part an engine's loop calls: it creates requests stamped with
 * the processed-prefill counter, turns the step's ready list into an ordered, budgeted batch (the
 * prefill queue strategy, then the {@link StepLoop}'s budget loop and pass shape), advances the
 * counter by the batch the engine actually submitted, and gives the engine's front the budget
 * pending requests must fit to enter ({@link #entryBudget}). The engine keeps its own queue, KV and
 * execution.
 *
 * <p>Not thread-safe: owned by the engine thread, like the step loop that calls it.
 */
public final class StepScheduler {

    private final PrefillQueueStrategy strategy;
    private final BatchBudget budget;
    private final StepLoop loop;
    private final boolean firstChunkGate;
    private final boolean priorityScheduling;
    private final PrefillBatchSelector lightllm;
    private final MixedChunkSelector sglang;
    private final ProcessedPrefillCounter counter = new ProcessedPrefillCounter();

    private StepScheduler(PrefillQueueStrategy strategy, BatchBudget budget, StepLoop loop, boolean firstChunkGate,
            boolean priorityScheduling) {
        this.priorityScheduling = priorityScheduling;
        this.strategy = requireNonNull(strategy, "strategy");
        this.budget = requireNonNull(budget, "budget");
        this.loop = requireNonNull(loop, "loop");
        this.firstChunkGate = firstChunkGate;
        this.lightllm = new PrefillBatchSelector(budget);
        this.sglang = new MixedChunkSelector(budget);
    }

    /** LightLLM's loop with its first-chunk gate: {@code create(strategyName, budget, StepLoop.LIGHTLLM, true)}. */
    public static StepScheduler create(String strategyName, BatchBudget budget) {
        return create(strategyName, budget, StepLoop.LIGHTLLM, true);
    }

    /**
     * @param strategyName {@code default}, {@code promote_shortest} or {@code hrrn}
     * @param firstChunkGate LightLLM's pending-first-chunk gate on ({@link StepLoop#LIGHTLLM} only;
     *     off is for measurement)
     * @throws IllegalArgumentException naming the choices on an unknown strategy
     */
    public static StepScheduler create(String strategyName, BatchBudget budget, StepLoop loop, boolean firstChunkGate) {
        return create(strategyName, budget, loop, firstChunkGate, false);
    }

    /**
     * As above; with {@code priorityScheduling} prefill requests are ordered by their request priority
     * first (lower first) and by the strategy within one priority, as vLLM's and SGLang's priority
     * scheduling order their waiting queues (see {@link io.kvroute.scheduler.queue.Priorities}).
     */
    public static StepScheduler create(String strategyName, BatchBudget budget, StepLoop loop, boolean firstChunkGate,
            boolean priorityScheduling) {
        return new StepScheduler(PrefillQueueStrategy.forName(strategyName), budget, loop, firstChunkGate,
                priorityScheduling);
    }

    /**
     * A request as the engine admits it, stamped with the counter now (its HRRN arrival).
     *
     * @param arrivalSeq the engine's arrival order (smaller arrived earlier), the strategies' tie-break
     */
    public SchedRequest admit(String requestId, long arrivalSeq, int inputLen, int maxNewTokens,
            boolean highPriorityRequest, int segmentIndex) {
        return admit(requestId, arrivalSeq, inputLen, maxNewTokens, highPriorityRequest, segmentIndex, 0);
    }

    /** As above, with the request's priority in normal form (lower first; 0 when it names none). */
    public SchedRequest admit(String requestId, long arrivalSeq, int inputLen, int maxNewTokens,
            boolean highPriorityRequest, int segmentIndex, int requestPriority) {
        return SchedRequest.create(requestId, arrivalSeq, inputLen, maxNewTokens, highPriorityRequest, segmentIndex,
                counter.value(), requestPriority);
    }

    /**
     * The ready list in the strategy's order: a permutation, the input untouched. With priority
     * scheduling, a stable sort then puts waiting prefill requests of a lower request priority first;
     * decode requests and prompts whose prefill has started keep their place ahead of them.
     */
    public List<SchedRequest> order(List<SchedRequest> ready) {
        List<SchedRequest> ordered = strategy.reorder(ready, counter.value());
        if (!priorityScheduling) {
            return ordered;
        }
        List<SchedRequest> byPriority = new ArrayList<>(ordered);
        // decode requests and a prompt already being prefilled keep their place ahead: vLLM schedules its
        // running queue before waiting requests, SGLang continues its chunked request first
        byPriority.sort(Comparator.comparingInt(r -> r.isDecode() || r.prefillStarted() ? Integer.MIN_VALUE
                : r.requestPriority()));
        return byPriority;
    }

    /**
     * Orders the ready list and selects this step's batch within the budgets and {@code freeKvTokens}:
     * for {@link StepLoop#LIGHTLLM} prefill-only or decode-only, for {@link StepLoop#SGLANG} mixed.
     */
    public StepBatch nextBatch(List<SchedRequest> ready, long freeKvTokens) {
        List<SchedRequest> ordered = order(ready);
        if (loop == StepLoop.SGLANG) {
            return sglang.select(ordered, freeKvTokens);
        }
        StepBatch both = lightllm.select(ordered, freeKvTokens);
        if (both.prefill().isEmpty()) {
            return both; // decode pass (or nothing)
        }
        return new StepBatch(List.of(), both.prefill(), both.prefillTokens(), both.skippedForTokens(),
                both.skippedForKv(), both.skippedForSlots()); // prefill pass: decode waits
    }

    /**
     * The budget pending requests must fit to enter the engine this iteration: LightLLM's
     * pending-first-chunk gate (unless switched off); {@link StepLoop#SGLANG} has none.
     *
     * @param inEngine the requests already inside the engine
     * @param inputLen a pending request's prompt length
     */
    public <T> EntryBudget<T> entryBudget(List<SchedRequest> inEngine, ToIntFunction<T> inputLen) {
        if (loop == StepLoop.SGLANG || !firstChunkGate) {
            return EntryBudget.unlimited();
        }
        int chunk = budget.chunkedPrefillSize();
        long runningNeed = 0;
        for (SchedRequest r : inEngine) {
            // LightLLM: min(input + output - kv, chunk); kvLen counts prompt KV only and a decoding
            // request always lacks exactly its newest token's KV, so its need is 1.
            int withoutKv = r.isDecode() ? 1 : r.remainingPrefillTokens();
            runningNeed += FirstChunkBudget.runningNeedTokens(withoutKv, chunk);
        }
        return new FirstChunkBudget<>(2L * budget.batchMaxTokens(), runningNeed,
                t -> Math.min(inputLen.applyAsInt(t), chunk));
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
        return budget;
    }

    public StepLoop loop() {
        return loop;
    }

    /** Strategy and budgets for {@code /scheduler}, with JSON-friendly snake_case keys. */
    public Map<String, Object> describe() {
        BatchBudget b = budget;
        Map<String, Object> budgets = new LinkedHashMap<>();
        budgets.put("batch_max_tokens", b.batchMaxTokens());
        budgets.put("chunked_prefill_size", b.chunkedPrefillSize());
        budgets.put("running_max_req_size", b.runningMaxReqSize());
        budgets.put("decode_shares_token_budget", b.decodeSharesTokenBudget());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("strategy", strategy.name());
        out.put("step_loop", loop.name().toLowerCase(Locale.ROOT));
        out.put("first_chunk_gate", loop == StepLoop.LIGHTLLM && firstChunkGate);
        out.put("priority_scheduling", priorityScheduling);
        out.put("budgets", budgets);
        out.put("processed_prefill_tokens", counter.value());
        return out;
    }
}
