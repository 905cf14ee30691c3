package io.kvroute.scheduler.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class AdmissionGateTest {

    private static final long SEC = TimeUnit.SECONDS.toNanos(1);

    @Test
    void requestWithoutSlot_isAnsweredBusyAfterTheWaitTimeoutOnAFakeClock() {
        AdmissionGate<String> gate = new AdmissionGate<>(new AdmissionConfig(true, 1, 10_000, 20));
        gate.offer("a", 100, false, 0);
        gate.offer("b", 100, false, 0);
        assertThat(gate.poll(0).admitted()).containsExactly("a");
        assertThat(gate.poll(19 * SEC).rejected()).isEmpty();
        AdmissionGate.Outcome<String> out = gate.poll(20 * SEC);
        assertThat(out.rejected()).extracting(AdmissionGate.Rejected::request).containsExactly("b");
        assertThat(out.rejected().get(0).waitedMillis()).isEqualTo(20_000);
        assertThat(gate.numPending()).isZero();
    }

    @Test
    void kvReservation_blocksUntilReleased() {
        AdmissionGate<String> gate = new AdmissionGate<>(new AdmissionConfig(true, 10, 1000, 20));
        gate.offer("a", 800, false, 0);
        gate.offer("b", 300, false, 0);
        assertThat(gate.poll(0).admitted()).containsExactly("a");
        assertThat(gate.poll(SEC).admitted()).isEmpty();
        gate.release(800);
        assertThat(gate.poll(2 * SEC).admitted()).containsExactly("b");
        assertThat(gate.reservedKvTokens()).isEqualTo(300);
    }

    @Test
    void negativeTimeout_waitsForever() {
        AdmissionGate<String> gate = new AdmissionGate<>(new AdmissionConfig(true, 1, 1000, -1));
        gate.offer("a", 1, false, 0);
        gate.offer("b", 1, false, 0);
        gate.poll(0);
        assertThat(gate.poll(1_000_000 * SEC).rejected()).isEmpty();
        assertThat(gate.numPending()).isEqualTo(1);
    }

    @Test
    void disabledLimit_admitsEverythingAtOnce() {
        AdmissionGate<String> gate = new AdmissionGate<>(new AdmissionConfig(false, 1, 10, 0));
        gate.offer("a", 1_000_000, false, 0);
        gate.offer("b", 1_000_000, false, 0);
        assertThat(gate.poll(0).admitted()).containsExactly("a", "b");
    }

    @Test
    void highPriority_isAdmittedBeforeEarlierNormalRequests() {
        AdmissionGate<String> gate = new AdmissionGate<>(new AdmissionConfig(true, 1, 1000, 20));
        gate.offer("running", 1, false, 0);
        gate.poll(0);
        gate.offer("n1", 1, false, 1);
        gate.offer("h1", 1, true, 2);
        gate.release(1);
        assertThat(gate.poll(3).admitted()).containsExactly("h1");
    }

    @Test
    void requestLargerThanCapacity_isBusyAtOnce() {
        AdmissionGate<String> gate = new AdmissionGate<>(new AdmissionConfig(true, 4, 1000, 20));
        gate.offer("huge", 1001, false, 0);
        assertThat(gate.poll(0).rejected()).extracting(AdmissionGate.Rejected::request).containsExactly("huge");
    }

    @Test
    void firstChunkBudget_admitsWhileTwiceBatchMaxTokensHoldsAndStopsAtTheFirstMisfit() {
        // LightLLM, batch_max_tokens 1024: limit 2048; one running request mid-prefill needs 1024.
        for (boolean selfLimit : new boolean[] {true, false}) {
            AdmissionGate<Integer> gate = new AdmissionGate<>(new AdmissionConfig(selfLimit, 256, 1 << 30, 20));
            gate.offer(1000, 1000, false, 0);
            gate.offer(16_384, 16_384, false, 0); // first chunk 1024: 1024 + 1000 + 1024 > 2048
            gate.offer(128, 128, false, 0); // would fit, but may not overtake the misfit
            FirstChunkBudget<Integer> budget = new FirstChunkBudget<>(2048, 1024, len -> Math.min(len, 1024));
            assertThat(gate.poll(0, budget).admitted()).containsExactly(1000);
            assertThat(budget.usedTokens()).isEqualTo(2024);
            assertThat(gate.numPending()).isEqualTo(2);
            // Once the running request decodes (need 1), the long one's first chunk fits, then the short one.
            FirstChunkBudget<Integer> next = new FirstChunkBudget<>(2048, 1 + 1, len -> Math.min(len, 1024));
            assertThat(gate.poll(1, next).admitted()).containsExactly(16_384, 128);
        }
    }

    @Test
    void firstChunkBudget_runningNeedIsTheNextChunkOrOneWhenDecoding() {
        assertThat(FirstChunkBudget.runningNeedTokens(15_360, 1024)).isEqualTo(1024);
        assertThat(FirstChunkBudget.runningNeedTokens(300, 1024)).isEqualTo(300);
        assertThat(FirstChunkBudget.runningNeedTokens(1, 1024)).isEqualTo(1);
    }

    @Test
    void requestPriority_aLowerValueGoesAheadOfEarlierNormalRequests_fifoWithinOneValue() {
        AdmissionGate<String> gate = new AdmissionGate<>(new AdmissionConfig(true, 1, 1000, -1));
        gate.offer("running", 1, false, 0, 0);
        gate.poll(0);
        gate.offer("batch", 1, false, 1, 1);
        gate.offer("d1", 1, false, 0, 2);
        gate.offer("i1", 1, false, -1, 3);
        gate.offer("d2", 1, false, 0, 4);
        gate.offer("i2", 1, false, -1, 5);
        gate.offer("continuation", 1, true, 5, 6); // admission-high-priority stays ahead of every normal request
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            gate.release(1);
            order.addAll(gate.poll(10 + i).admitted());
        }
        assertThat(order).containsExactly("continuation", "i1", "i2", "d1", "d2", "batch");
    }

    /**
     * Random offers (priorities in -2..2, some admission-high-priority), releases and cancels against a
     * naive model: pending requests sorted stably by (high first, then priority), admitted head-first while
     * slots last.
     */
    @Test
    void randomOffersReleasesAndCancels_admitInTheOrderOfAStableSortByPriority() {
        for (int seed = 1; seed <= 200; seed++) {
            Random rnd = new Random(seed);
            int slots = 1 + rnd.nextInt(4);
            AdmissionGate<Integer> gate = new AdmissionGate<>(new AdmissionConfig(true, slots, 1_000_000, -1));
            record P(Integer id, boolean high, int priority, long seq) {} // the gate cancels by identity
            List<P> model = new ArrayList<>();
            int used = 0;
            long seq = 0;
            for (int step = 0; step < 200; step++) {
                int op = rnd.nextInt(10);
                if (op < 5) {
                    P p = new P(Integer.valueOf(1000 + step), rnd.nextInt(6) == 0, rnd.nextInt(5) - 2, seq++);
                    gate.offer(p.id(), 1, p.high(), p.priority(), step);
                    model.add(p);
                } else if (op < 7 && used > 0) {
                    gate.release(1);
                    used--;
                } else if (op < 8 && !model.isEmpty()) {
                    P victim = model.remove(rnd.nextInt(model.size()));
                    assertThat(gate.cancel(victim.id())).isTrue();
                }
                List<Integer> admitted = gate.poll(step).admitted();
                model.sort(Comparator.comparing((P p) -> !p.high())
                        .thenComparingInt(p -> p.high() ? 0 : p.priority()).thenComparingLong(P::seq));
                List<Integer> expected = new ArrayList<>();
                while (used < slots && !model.isEmpty()) {
                    expected.add(model.remove(0).id());
                    used++;
                }
                assertThat(admitted).as("seed %d step %d", seed, step).isEqualTo(expected);
                assertThat(gate.numPending()).isEqualTo(model.size());
            }
        }
    }
}
