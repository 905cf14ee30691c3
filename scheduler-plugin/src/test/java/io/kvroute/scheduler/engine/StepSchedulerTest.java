package io.kvroute.scheduler.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.scheduler.admission.EntryBudget;
import io.kvroute.scheduler.batch.BatchBudget;
import io.kvroute.scheduler.batch.PrefillChunk;
import io.kvroute.scheduler.batch.StepBatch;
import io.kvroute.scheduler.queue.SchedRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine SPI's step loop: ready list in, ordered budgeted batch out, accounting on submit. */
class StepSchedulerTest {

    @Test
    void promoteShortest_ordersTheReadyList_andTheBudgetCutsTheBatch() {
        StepScheduler steps = StepScheduler.create("promote_shortest", new BatchBudget(1000, 1000, 8, false));
        SchedRequest longOne = admitted(steps, "long", 900);
        SchedRequest shortOne = admitted(steps, "short", 100);
        List<SchedRequest> ready = List.of(longOne, shortOne);
        assertThat(steps.order(ready)).containsExactly(shortOne, longOne);
        assertThat(ready).containsExactly(longOne, shortOne); // input untouched

        StepBatch batch = steps.nextBatch(ready, 1_000_000);
        assertThat(batch.prefill()).extracting(PrefillChunk::request).containsExactly(shortOne, longOne);
        assertThat(batch.prefillTokens()).isEqualTo(1000);
    }

    @Test
    void submitted_advancesTheHrrnClock_whichStampsLaterArrivals() {
        StepScheduler steps = StepScheduler.create("hrrn", BatchBudget.DEFAULTS);
        SchedRequest first = admitted(steps, "a", 300);
        assertThat(first.arrivalProcessedTokens()).isZero();
        StepBatch batch = steps.nextBatch(List.of(first), 1_000_000);
        assertThat(steps.processedPrefillTokens()).as("selection alone does not count").isZero();
        steps.submitted(batch);
        assertThat(steps.processedPrefillTokens()).isEqualTo(300);
        assertThat(admitted(steps, "b", 10).arrivalProcessedTokens()).isEqualTo(300);
        assertThat(steps.describe()).containsEntry("strategy", "hrrn").containsKey("budgets");
    }

    @Test
    void lightllmLoop_aPrefillPassHoldsNoDecode_sglangLoopMixesBoth() {
        for (StepLoop loop : StepLoop.values()) {
            StepScheduler steps = StepScheduler.create("default", new BatchBudget(1000, 1000, 8, false), loop, true);
            SchedRequest decoding = admitted(steps, "decoding", 1);   // one prompt token left: a decode request
            SchedRequest waiting = admitted(steps, "waiting", 100);
            assertThat(decoding.isDecode()).isTrue();
            StepBatch batch = steps.nextBatch(List.of(decoding, waiting), 1_000_000);
            assertThat(batch.prefill()).extracting(PrefillChunk::request).containsExactly(waiting);
            if (loop == StepLoop.LIGHTLLM) {
                assertThat(batch.decode()).as("LightLLM: the prefill pass alone").isEmpty();
                StepBatch decodeOnly = steps.nextBatch(List.of(decoding), 1_000_000);
                assertThat(decodeOnly.decode()).containsExactly(decoding);
            } else {
                assertThat(batch.decode()).as("SGLang: mixed chunk").containsExactly(decoding);
            }
        }
    }

    @Test
    void entryBudget_isLightllmsFirstChunkGate_onlyWhenOn() {
        BatchBudget budget = new BatchBudget(100, 100, 8, false);
        List<SchedRequest> none = List.of();
        EntryBudget<Integer> gated = StepScheduler.create("default", budget, StepLoop.LIGHTLLM, true)
                .entryBudget(none, n -> n);
        assertThat(gated.tryEnter(100)).isTrue();
        assertThat(gated.tryEnter(100)).isTrue();
        assertThat(gated.tryEnter(100)).as("the third first chunk exceeds 200").isFalse();
        EntryBudget<Integer> ungated = StepScheduler.create("default", budget, StepLoop.LIGHTLLM, false)
                .entryBudget(none, n -> n);
        EntryBudget<Integer> sglang = StepScheduler.create("default", budget, StepLoop.SGLANG, true)
                .entryBudget(none, n -> n);
        for (int i = 0; i < 10; i++) {
            assertThat(ungated.tryEnter(100)).isTrue();
            assertThat(sglang.tryEnter(100)).isTrue();
        }
    }

    @Test
    void unknownStrategy_namesTheChoices() {
        assertThatThrownBy(() -> StepScheduler.create("fastest", BatchBudget.DEFAULTS))
                .hasMessageContaining("fastest").hasMessageContaining("hrrn");
    }

    private static long arrivals;

    private static SchedRequest admitted(StepScheduler steps, String id, int inputLen) {
        SchedRequest r = steps.admit(id, ++arrivals, inputLen, 16, false, 0);
        r.admitWithCachedLen(0);
        return r;
    }

    @Test
    void priorityScheduling_ordersPrefillByRequestPriorityFirst_andByTheStrategyWithinOneValue() {
        BatchBudget budget = new BatchBudget(100_000, 100_000, 16, false);
        StepScheduler plain = StepScheduler.create("default", budget, StepLoop.SGLANG, false);
        StepScheduler prio = StepScheduler.create("default", budget, StepLoop.SGLANG, false, true);
        for (StepScheduler steps : List.of(plain, prio)) {
            SchedRequest decoding = steps.admit("decoding", 1, 10, 4, false, 0, 3);
            decoding.admitWithCachedLen(9); // one prompt token left: a decode request
            SchedRequest longLow = steps.admit("long-low", 2, 900, 4, false, 0, 1);
            SchedRequest shortLow = steps.admit("short-low", 3, 100, 4, false, 0, 1);
            SchedRequest longHigh = steps.admit("long-high", 4, 800, 4, false, 0, -1);
            SchedRequest mid = steps.admit("mid", 5, 50, 4, false, 0, 0);
            SchedRequest shortHigh = steps.admit("short-high", 6, 200, 4, false, 0, -1);
            SchedRequest chunked = steps.admit("chunked", 7, 5000, 4, false, 0, 9);
            chunked.admitWithCachedLen(0);
            chunked.advancePrefill(1000); // its prefill has started: it keeps its place
            List<SchedRequest> ready = List.of(decoding, longLow, shortLow, longHigh, mid, shortHigh, chunked);
            if (steps == plain) {
                assertThat(steps.order(ready)).as("priority ignored when off")
                        .containsExactly(decoding, longLow, shortLow, longHigh, mid, shortHigh, chunked);
                assertThat(steps.describe()).containsEntry("priority_scheduling", false);
            } else {
                assertThat(steps.order(ready))
                        .containsExactly(decoding, chunked, longHigh, shortHigh, mid, longLow, shortLow);
                assertThat(steps.describe()).containsEntry("priority_scheduling", true);
            }
        }
    }
}
