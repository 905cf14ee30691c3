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
 * frees room, and anywhere with room once the bound has passed; its class's queue timeout still holds. While it waits
 * with room elsewhere the gate serves other tenants of its class and lower classes past it, and it goes first when its
 * holder frees room; a head that fits nowhere still holds the classes below.
 */
class QosGateHolderWaitTest {

    private static final long WAIT_NANOS = 200_000_000L;
    private static final TenantSpec A = new TenantSpec("a", 1, PriorityClass.SYSTEM, 0, 0);
    private static final TenantSpec B = new TenantSpec("b", 1, PriorityClass.SYSTEM, 0, 0);
    private static final TenantSpec C = new TenantSpec("c", 1, PriorityClass.SYSTEM, 0, 0);

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

    /** Offers a's 500-token request with 400 tokens cached on w1, after {@link #fillHolder}: it waits for w1. */
    private Req offerWaitingForW1(QosGate gate) {
        Req chat = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of("w1", 400L));
        assertThat(chat.outcome).as("w2 has room, but w1 holds 400 of its 500 tokens").isEqualTo("pending");
        return chat;
    }

    @Test
    void aRequestWhoseHolderIsFull_waitsForIt_andIsAdmittedThereWhenItFreesRoom() {
        QosGate gate = gate(WAIT_NANOS);
        Req filler = fillHolder(gate);
        Req chat = offerWaitingForW1(gate);
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
    void aHeadWaitingForItsHolder_doesNotHoldALowerClass_thatFitsOnAnotherWorker() {
        QosGate gate = gate(WAIT_NANOS);
        Req filler = fillHolder(gate);
        Req chat = offerWaitingForW1(gate);
        Req batch = offer(gate, B, PriorityClass.BATCH, 100, Map.of());
        assertThat(batch.outcome).as("the default head waits for w1 by choice: w2 serves the class below").isEqualTo("admitted on w2");
        gate.finished(filler.ticket, "w1");
        assertThat(chat.outcome).isEqualTo("admitted on w1");
        assertThat(holderWaits).containsExactly("default holder");
    }

    @Test
    void aHeadWaitingForItsHolder_doesNotHoldTheNextTenantOfItsClass_andGoesFirstWhenItsHolderFrees() {
        QosGate gate = gate(WAIT_NANOS);
        Req filler = fillHolder(gate);
        Req chat = offerWaitingForW1(gate);
        Req other1 = offer(gate, C, PriorityClass.DEFAULT, 500, Map.of());
        Req other2 = offer(gate, C, PriorityClass.DEFAULT, 500, Map.of());
        assertThat(List.of(other1.outcome, other2.outcome)).as("served past a's waiting head at once, where there is room")
                .containsOnly("admitted on w2");
        Req other3 = offer(gate, C, PriorityClass.DEFAULT, 600, Map.of());
        assertThat(other3.outcome).as("no room anywhere").isEqualTo("pending");
        gate.finished(filler.ticket, "w1");
        assertThat(chat.outcome).as("a kept its place: c was served meanwhile, a goes first").isEqualTo("admitted on w1");
        assertThat(other3.outcome).as("500 + 600 do not fit on w1").isEqualTo("pending");
        assertThat(holderWaits).containsExactly("default holder");
    }

    @Test
    void aTenantsNextRequest_waitsBehindItsHeadWaitingForTheHolder_andGoesWhenThatClientLeaves() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req chat = offerWaitingForW1(gate);
        Req next = offer(gate, A, PriorityClass.DEFAULT, 300, Map.of());
        assertThat(next.outcome).as("a tenant's requests go in order: passing over a passes over its queue").isEqualTo("pending");
        gate.finished(chat.ticket, null);
        assertThat(next.outcome).as("its head gone, a's next request fits on w2 at once").isEqualTo("admitted on w2");
        assertThat(holderWaits).containsExactly("default gone");
    }

    @Test
    void pastTheMostHeadsPassedOver_theClassHoldsTheClassesBelow() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        for (int i = 0; i <= QosGate.MAX_PASSED_HEADS; i++) {
            Req chat = offer(gate, new TenantSpec("t" + i, 1, PriorityClass.SYSTEM, 0, 0), PriorityClass.DEFAULT, 500,
                    Map.of("w1", 400L));
            assertThat(chat.outcome).as("t%d waits for w1", i).isEqualTo("pending");
        }
        Req batch = offer(gate, B, PriorityClass.BATCH, 100, Map.of());
        assertThat(batch.outcome).as("%d heads waiting for their holder: the last one holds the class below",
                QosGate.MAX_PASSED_HEADS + 1).isEqualTo("pending");
    }

    @Test
    void aHeadThatFitsNowhere_stillHoldsTheClassesBelow() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req otherFiller = offer(gate, B, PriorityClass.DEFAULT, 800, Map.of());
        assertThat(otherFiller.outcome).isEqualTo("admitted on w2");
        Req big = offer(gate, A, PriorityClass.DEFAULT, 500, Map.of());
        Req batch = offer(gate, C, PriorityClass.BATCH, 100, Map.of());
        gate.tick();
        assertThat(big.outcome).isEqualTo("pending");
        assertThat(batch.outcome).as("strict order: 100 would fit on either worker, behind a head that fits on none")
                .isEqualTo("pending");
    }

    @Test
    void aHeadWaitingForItsHolder_withNoRoomElsewhere_fitsNowhere_andHoldsTheClassesBelow() {
        QosGate gate = gate(WAIT_NANOS);
        fillHolder(gate);
        Req chat = offerWaitingForW1(gate);
        Req otherFiller = offer(gate, C, PriorityClass.DEFAULT, 800, Map.of());
        assertThat(otherFiller.outcome).as("passed a's waiting head").isEqualTo("admitted on w2");
        Req batch = offer(gate, B, PriorityClass.BATCH, 100, Map.of());
        gate.tick();
        assertThat(chat.outcome).isEqualTo("pending");
        assertThat(batch.outcome).as("a's head now fits on no worker: it holds the class below as any such head does")
                .isEqualTo("pending");
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
