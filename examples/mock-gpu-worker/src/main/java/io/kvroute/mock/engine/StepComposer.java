package io.kvroute.mock.engine;

import static java.util.Objects.requireNonNull;

import io.kvroute.scheduler.admission.EntryBudget;
import io.kvroute.scheduler.admission.FirstChunkBudget;
import io.kvroute.scheduler.batch.BatchBudget;
import io.kvroute.scheduler.batch.MixedChunkSelector;
import io.kvroute.scheduler.batch.PrefillBatchSelector;
import io.kvroute.scheduler.batch.StepBatch;
import io.kvroute.scheduler.queue.SchedRequest;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * Composes one engine step the way the configured {@link EngineLoop} does, and gates entry into the
 * engine the way that engine's front does. Plain Java on the engine thread; no state of its own.
 *
 * <p>{@code lightllm}: LightLLM's budget loop selects decode requests and prefill chunks
 * ({@link PrefillBatchSelector}, decode charged against KV and slots only); if any chunk was
 * selected the step is that prefill pass alone and the decode requests wait, else the decode pass.
 * {@code sglang}: {@link MixedChunkSelector}; decode and prefill share one pass.
 */
final class StepComposer {

    private final EngineLoop loop;
    private final boolean firstChunkGate;
    private final BatchBudget budget;
    private final PrefillBatchSelector lightllm;
    private final MixedChunkSelector sglang;

    StepComposer(EngineLoop loop, boolean firstChunkGate, int batchMaxTokens, int chunkedPrefillSize,
            int runningMaxReqSize) {
        this.loop = requireNonNull(loop, "loop");
        this.firstChunkGate = firstChunkGate;
        this.budget = new BatchBudget(batchMaxTokens, chunkedPrefillSize, runningMaxReqSize, false);
        this.lightllm = new PrefillBatchSelector(budget);
        this.sglang = new MixedChunkSelector(budget);
    }

    EngineLoop loop() {
        return loop;
    }

    /** The step's batch: for {@code lightllm} prefill-only or decode-only, for {@code sglang} mixed. */
    StepBatch compose(List<SchedRequest> ordered, long freeKvTokens) {
        if (loop == EngineLoop.SGLANG) {
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
     * pending-first-chunk gate (unless switched off for measurement); SGLang has none.
     *
     * @param inEngine the requests already inside the engine
     * @param inputLen a pending request's prompt length
     */
    <T> EntryBudget<T> entryBudget(List<SchedRequest> inEngine, ToIntFunction<T> inputLen) {
        if (loop == EngineLoop.SGLANG || !firstChunkGate) {
            return EntryBudget.unlimited();
        }
        int chunk = budget.chunkedPrefillSize();
        long runningNeed = 0;
        for (SchedRequest r : inEngine) {
            // LightLLM: min(input + output - kv, chunk); our kvLen counts prompt KV only and a decoding
            // request always lacks exactly its newest token's KV, so its need is 1.
            int withoutKv = r.isDecode() ? 1 : r.remainingPrefillTokens();
            runningNeed += FirstChunkBudget.runningNeedTokens(withoutKv, chunk);
        }
        return new FirstChunkBudget<>(2L * budget.batchMaxTokens(), runningNeed,
                t -> Math.min(inputLen.applyAsInt(t), chunk));
    }
}
