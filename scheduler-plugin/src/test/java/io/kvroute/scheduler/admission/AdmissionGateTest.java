package io.kvroute.scheduler.admission;

import static org.assertj.core.api.Assertions.assertThat;

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
}
