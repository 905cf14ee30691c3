package io.kvroute.scheduler.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
}
