package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The bounded wait for the prefix holder ({@code --qos-holder-wait-ms}) under per-worker capacity, on a fake clock:
 * a request whose holder is full waits for it when the holder saves enough prefill, is admitted there as soon as it
 * frees room, and anywhere with room once the bound has passed; its class's order and queue timeout still hold.
 */
class QosGateHolderWaitTest {

    private static final long WAIT_NANOS = 200_000_000L;
    private static final TenantSpec A = new TenantSpec("a", 1, PriorityClass.SYSTEM, 0, 0);
    private static final TenantSpec B = new TenantSpec("b", 1, PriorityClass.SYSTEM, 0, 0);

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final List<String> pool = new ArrayList<>(List.of("w1", "w2"));
    private final List<String> holderWaits = new ArrayList<>();
    private final QosListener listener = new QosListener() {
        @Override
        public void holderWait(PriorityClass c, String outcome) {
            holderWaits.add(c.label() + " " + outcome);
        }
    };

    private QosGate gate(long holderWaitNanos, TenantDirectory dir) {
        return new QosGate(() -> dir, 1_000, 0, QosGate.Fairness.TOKENS, holderWaitNanos,
                new FakeFleet(pool::size), nanos::get, listener);
    }

    private QosGate gate(long holderWaitNanos) {
        return gate(holderWaitNanos, directory(60_000));
    }

    final class Req implements QosTicket.Callbacks {
        final QosTicket ticket;
        String outcome = "pending";

        Req(TenantSpec tenant, PriorityClass c, long cost, Map<String, Long> cached) {
            this.ticket = new QosTicket(tenant, c, cost, cost, w -> cached.getOrDefault(w, 0L), () -> List.copyOf(pool), this);
        }

        @Override
        public void admitted() {
            outcome = "admitted on " + ticket.holder;
        }

        @Override
        public void rejected(int status, String reason, long retryAfterSeconds) {
            outcome = status + " " + reason;
        }

        @Override
        public void preempted(long retryAfterSeconds) {
            outcome = "preempted";
        }
    }

    private Req offer(QosGate gate, TenantSpec tenant, PriorityClass c, long cost, Map<String, Long> cached) {
        Req r = new Req(tenant, c, cost, cached);
        gate.offer(r.ticket);
        return r;
    }

    /** Fills w1 (the holder of the prompt the tests send) with 800 of its 1,000 tokens. */
    private Req fillHolder(QosGate gate) {
        Req filler = offer(gate, B, PriorityClass.DEFAULT, 800, Map.of("w1", 1L));
        assertThat(filler.outcome).isEqualTo("admitted on w1");
        return filler;
    }

    @Test
    void aRequestWhoseHolderIsFull_waitsForIt_andIsAdmittedThereWhenItFreesRoom() {
        QosGate gate = gate(WAIT_NANOS);
        Req filler = fillHolder(gate);
        Req chat = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of("w1", 400L));
        assertThat(chat.outcome).as("w2 has room, but w1 holds 400 of its 500 tokens").isEqualTo("pending");
        nanos.addAndGet(WAIT_NANOS / 2);
        gate.tick();
        assertThat(chat.outcome).as("inside the bound: still waiting for w1").isEqualTo("pending");
        gate.finished(filler.ticket, "w1");
        assertThat(chat.outcome).isEqualTo("admitted on w1");
        assertThat(holderWaits).containsExactly("default holder");
    }

    @Test
    void aRequestWhoseWaitPassesTheBound_isAdmittedOnAnotherWorkerWithRoom_atTheNextTick() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req chat = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of("w1", 400L));
        nanos.addAndGet(WAIT_NANOS - 1);
        gate.tick();
        assertThat(chat.outcome).isEqualTo("pending");
        nanos.addAndGet(1);
        gate.tick();
        assertThat(chat.outcome).isEqualTo("admitted on w2");
        assertThat(holderWaits).containsExactly("default bound_passed");
    }

    @Test
    void noWait_whenTheHolderSavesFewerTokensThanTheMinimum_overTheBestWorkerWithRoom() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req few = offer(gate, A, PriorityClass.DEFAULT, 300, Map.of("w1", Placement.MIN_HOLDER_SAVED_TOKENS - 1));
        assertThat(few.outcome).as("fewer cached tokens on w1 than the minimum").isEqualTo("admitted on w2");
        Req close = offer(gate, A, PriorityClass.DEFAULT, 250, Map.of("w1", 600L, "w2", 400L));
        assertThat(close.outcome).as("w1 saves only 200 over w2").isEqualTo("admitted on w2");
        assertThat(holderWaits).isEmpty();
    }

    @Test
    void noWait_whenTheHolderSavesLessThanHalfThePrompt() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req longPrompt = offer(gate, A, PriorityClass.DEFAULT, 900, Map.of("w1", 400L));
        assertThat(longPrompt.outcome).as("400 of 900 cached: under half").isEqualTo("admitted on w2");
        assertThat(holderWaits).isEmpty();
    }

    @Test
    void zeroDisablesTheWait() {
        QosGate gate = gate(0);
        fillHolder(gate);
        Req chat = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of("w1", 400L));
        assertThat(chat.outcome).isEqualTo("admitted on w2");
        assertThat(holderWaits).isEmpty();
    }

    @Test
    void aRequestWaitingForItsHolder_stillTimesOutWithItsClass() {
        QosGate gate = gate(60_000_000_000L, directory(100));
        fillHolder(gate);
        Req chat = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of("w1", 400L));
        nanos.addAndGet(100_000_000L);
        gate.tick();
        assertThat(chat.outcome).as("the class's 100 ms queue timeout comes before the 60 s bound")
                .isEqualTo("429 queue_timeout");
        assertThat(holderWaits).containsExactly("default gone");
    }

    @Test
    void aClientLeavingWhileItsRequestWaitsForTheHolder_isCountedGone() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req chat = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of("w1", 400L));
        gate.finished(chat.ticket, null);
        assertThat(chat.outcome).isEqualTo("pending");
        assertThat(gate.queued(PriorityClass.DEFAULT)).isZero();
        assertThat(holderWaits).containsExactly("default gone");
    }

    @Test
    void aHeadWaitingForItsHolder_holdsTheClassesBelow_onlyUntilTheBound() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req chat = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of("w1", 400L));
        Req batch = offer(gate, B, PriorityClass.BATCH, 100, Map.of());
        assertThat(batch.outcome).as("strict order: a default request waits").isEqualTo("pending");
        nanos.addAndGet(WAIT_NANOS / 2);
        gate.tick();
        assertThat(batch.outcome).as("inside the bound the default head holds the class below").isEqualTo("pending");
        nanos.addAndGet(WAIT_NANOS / 2);
        gate.tick();
        assertThat(chat.outcome).isEqualTo("admitted on w2");
        assertThat(batch.outcome).startsWith("admitted");
    }

    @Test
    void aHigherClassArriving_isAdmittedAhead_ofALowerOneWaitingForTheSameHolder() {
        QosGate gate = gate(WAIT_NANOS);
        Req filler = fillHolder(gate);
        Req low = offer(gate, A, PriorityClass.BATCH, 300, Map.of("w1", 300L));
        Req high = offer(gate, B, PriorityClass.DEFAULT, 300, Map.of("w1", 300L));
        assertThat(List.of(low.outcome, high.outcome)).containsOnly("pending");
        gate.finished(filler.ticket, "w1");
        assertThat(high.outcome).isEqualTo("admitted on w1");
        assertThat(low.outcome).as("w1 still has room for both").isEqualTo("admitted on w1");
        assertThat(holderWaits).containsExactly("default holder", "batch holder");
    }

    /** No reservations; every class's queue timeout is {@code queueTimeoutMillis}. */
    private static TenantDirectory directory(long queueTimeoutMillis) {
        Map<PriorityClass, ClassSpec> specs = new EnumMap<>(PriorityClass.class);
        for (PriorityClass c : PriorityClass.values()) {
            ClassSpec d = ClassSpec.defaultFor(c);
            specs.put(c, new ClassSpec(0, 0, d.queueCap(), queueTimeoutMillis, d.starvationMillis(), d.canPreempt()));
        }
        return new TenantDirectory(Map.of(), Map.of(), specs, 256);
    }
}
