package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link QosGate} on a fake clock and a fake fleet: admission, classes, timeouts, promotion, preemption, fairness. */
class QosGateTest {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private int workers = 1;
    private boolean engineSaturated;
    private final List<String> events = new ArrayList<>();

    private QosGate gate(TenantDirectory dir, long capacityPerWorker, double slack) {
        return gate(dir, capacityPerWorker, slack, QosGate.Fairness.TOKENS);
    }

    private QosGate gate(TenantDirectory dir, long capacityPerWorker, double slack, QosGate.Fairness fairness) {
        return new QosGate(() -> dir, capacityPerWorker, slack, fairness, new QosGate.Fleet() {
            @Override
            public int usableWorkers() {
                return workers;
            }

            @Override
            public boolean engineSaturated() {
                return engineSaturated;
            }
        }, nanos::get, QosListener.NONE);
    }

    private final class Req implements QosTicket.Callbacks {
        final String name;
        final QosTicket ticket;
        String outcome = "pending";

        Req(String name, TenantSpec tenant, PriorityClass c, long cost, Map<String, Long> cachedByWorker) {
            this.name = name;
            this.ticket = new QosTicket(tenant, c, cost, cost, cachedByWorker == null ? null
                    : w -> cachedByWorker.getOrDefault(w, 0L), this);
        }

        @Override
        public void admitted() {
            outcome = "admitted";
            events.add(name);
        }

        @Override
        public void rejected(int status, String reason, long retryAfterSeconds) {
            outcome = status + " " + reason + " retry=" + retryAfterSeconds;
        }

        @Override
        public void preempted(long retryAfterSeconds) {
            outcome = "preempted retry=" + retryAfterSeconds;
        }
    }

    private Req offer(QosGate gate, String name, TenantSpec tenant, PriorityClass c, long cost) {
        Req r = new Req(name, tenant, c, cost, null);
        gate.offer(r.ticket);
        return r;
    }

    private static final TenantSpec A = new TenantSpec("a", 1, PriorityClass.SYSTEM, 0, 0);
    private static final TenantSpec B = new TenantSpec("b", 1, PriorityClass.SYSTEM, 0, 0);

    @Test
    void admitsWhileTokensFit_thenQueues_thenServesTheQueueWhenCapacityFrees() {
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0);
        Req first = offer(gate, "first", A, PriorityClass.DEFAULT, 600);
        Req second = offer(gate, "second", A, PriorityClass.DEFAULT, 100);
        // held back from default: the unused system (5 %) and interactive (25 %) reservations, so 700 of 1000
        Req third = offer(gate, "third", A, PriorityClass.DEFAULT, 300);
        assertThat(first.outcome).isEqualTo("admitted");
        assertThat(second.outcome).isEqualTo("admitted");
        assertThat(third.outcome).isEqualTo("pending");
        gate.finished(first.ticket, "w1");
        assertThat(third.outcome).isEqualTo("admitted");
        assertThat(gate.inFlightTokens()).isEqualTo(400);
    }

    @Test
    void lowerClasses_leaveTheUnusedReservationsOfHigherClassesFree() {
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0);
        // held back from batch: system 5 % + interactive 25 % + default 10 % of 1000 = 400
        Req batch1 = offer(gate, "b1", A, PriorityClass.BATCH, 600);
        Req batch2 = offer(gate, "b2", A, PriorityClass.BATCH, 10);
        Req interactive = offer(gate, "i", A, PriorityClass.INTERACTIVE, 300); // held back from it: system 50
        assertThat(batch1.outcome).isEqualTo("admitted");
        assertThat(batch2.outcome).isEqualTo("pending");
        assertThat(interactive.outcome).isEqualTo("admitted");
    }

    @Test
    void aFreedSlot_goesToTheHighestClassWithWork() {
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0);
        Req big = offer(gate, "big", A, PriorityClass.INTERACTIVE, 950);
        Req batch = offer(gate, "batch", A, PriorityClass.BATCH, 100);
        Req dflt = offer(gate, "default", A, PriorityClass.DEFAULT, 100);
        Req inter = offer(gate, "interactive", A, PriorityClass.INTERACTIVE, 100);
        assertThat(List.of(batch.outcome, dflt.outcome, inter.outcome)).containsOnly("pending");
        gate.finished(big.ticket, "w1");
        assertThat(events).containsExactly("big", "interactive", "default", "batch");
    }

    @Test
    void queueCap_refusesTheNextRequestWith429QueueFull() {
        TenantDirectory dir = dirWithClass(PriorityClass.DEFAULT, new ClassSpec(0, 0.1, 1, 60_000, 30_000, false));
        QosGate gate = gate(dir, 100, 0);
        offer(gate, "running", A, PriorityClass.DEFAULT, 100);
        Req waiting = offer(gate, "waiting", A, PriorityClass.DEFAULT, 100);
        Req refused = offer(gate, "refused", A, PriorityClass.DEFAULT, 100);
        assertThat(waiting.outcome).isEqualTo("pending");
        assertThat(refused.outcome).isEqualTo("429 queue_full retry=1");
    }

    @Test
    void aWaitPastTheClassTimeout_is429WithWorkers_and503WithoutAny_neverAHang() {
        TenantDirectory dir = dirWithClass(PriorityClass.DEFAULT, new ClassSpec(0, 0.1, 10, 2_000, 30_000, false));
        QosGate gate = gate(dir, 100, 0);
        offer(gate, "running", A, PriorityClass.DEFAULT, 100);
        Req first = offer(gate, "first", A, PriorityClass.DEFAULT, 100);
        nanos.addAndGet(1_000_000_000L);
        Req second = offer(gate, "second", A, PriorityClass.DEFAULT, 100);
        nanos.addAndGet(1_000_000_000L);
        gate.tick();
        assertThat(first.outcome).isEqualTo("429 queue_timeout retry=1");
        assertThat(second.outcome).isEqualTo("pending");
        workers = 0;
        nanos.addAndGet(1_000_000_000L);
        gate.tick();
        assertThat(second.outcome).isEqualTo("503 no_worker retry=1");
        assertThat(gate.queued(PriorityClass.DEFAULT)).isZero();
    }

    @Test
    void endingARefusedRequest_changesNoAccounting() {
        TenantDirectory dir = dirWithClass(PriorityClass.DEFAULT, new ClassSpec(0, 0.1, 0, 60_000, 30_000, false));
        QosGate gate = gate(dir, 100, 0);
        Req running = offer(gate, "running", A, PriorityClass.DEFAULT, 100);
        Req refused = offer(gate, "refused", A, PriorityClass.DEFAULT, 50);
        assertThat(refused.outcome).isEqualTo("429 queue_full retry=1");
        gate.finished(refused.ticket, null); // the adapter ends every request, refused ones too
        assertThat(gate.inFlightTokens()).isEqualTo(100);
        gate.finished(running.ticket, null);
        assertThat(gate.inFlightTokens()).isZero();
    }

    @Test
    void noUsableWorker_refusesAtArrivalWith503() {
        workers = 0;
        QosGate gate = gate(TenantDirectory.empty(), 100, 0);
        assertThat(offer(gate, "x", A, PriorityClass.DEFAULT, 10).outcome).isEqualTo("503 no_worker retry=1");
    }

    @Test
    void engineSaturation_holdsRequestsAtTheRouter_untilATickSeesRoom() {
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0);
        engineSaturated = true;
        Req r = offer(gate, "r", A, PriorityClass.DEFAULT, 10);
        assertThat(r.outcome).isEqualTo("pending");
        engineSaturated = false;
        gate.tick();
        assertThat(r.outcome).isEqualTo("admitted");
    }

    @Test
    void aStarvedBatchHead_mayUseCapacityHeldBackForHigherClasses() {
        TenantDirectory dir = dirWithClass(PriorityClass.BATCH, new ClassSpec(0, 0, 10, 600_000, 5_000, false));
        QosGate gate = gate(dir, 1_000, 0);
        offer(gate, "b1", A, PriorityClass.BATCH, 500);
        Req starving = offer(gate, "b2", A, PriorityClass.BATCH, 200); // 700 > 600 = 1000 - 400 held back
        gate.tick();
        assertThat(starving.outcome).isEqualTo("pending");
        nanos.addAndGet(5_000_000_000L);
        gate.tick();
        assertThat(starving.outcome).isEqualTo("admitted");
    }

    /**
     * A batch class backlogged for good has a head past its starvation threshold at every freed slot; promotion
     * lets one of its requests through per threshold period, not all of them ahead of the waiting default class.
     */
    @Test
    void aBackloggedBatchClass_isPromotedOncePerStarvationPeriod_notAheadOfDefaultForGood() {
        TenantDirectory dir = dirWithClass(PriorityClass.BATCH, new ClassSpec(0, 0, 10, 600_000, 5_000, false));
        QosGate gate = gate(dir, 1_000, 0);
        Req d0 = offer(gate, "d0", A, PriorityClass.DEFAULT, 700);
        offer(gate, "b1", B, PriorityClass.BATCH, 100);
        offer(gate, "b2", B, PriorityClass.BATCH, 100);
        offer(gate, "b3", B, PriorityClass.BATCH, 100);
        Req d1 = offer(gate, "d1", A, PriorityClass.DEFAULT, 100); // 800 > 700 = 1000 - 300 held back from default
        assertThat(d1.outcome).isEqualTo("pending");
        nanos.addAndGet(5_000_000_000L);
        gate.tick();
        assertThat(events).containsExactly("d0", "b1");
        gate.finished(d0.ticket, "w1");
        assertThat(events).containsExactly("d0", "b1", "d1", "b2", "b3");
    }

    @Test
    void interactive_preemptsTheNewestBatchRequestThatHasSentNothing_butNeverAStartedOne() {
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0);
        Req started = offer(gate, "started", A, PriorityClass.BATCH, 300);
        Req older = offer(gate, "older", A, PriorityClass.BATCH, 150);
        Req newer = offer(gate, "newer", A, PriorityClass.BATCH, 150);
        assertThat(gate.started(started.ticket, 0)).isTrue();
        Req high = offer(gate, "high", B, PriorityClass.INTERACTIVE, 500); // 600 + 500 > 950: 150 must go
        assertThat(newer.outcome).isEqualTo("preempted retry=1");
        assertThat(older.outcome).isEqualTo("admitted");
        assertThat(started.outcome).isEqualTo("admitted");
        assertThat(high.outcome).isEqualTo("admitted");
        assertThat(gate.started(newer.ticket, 0)).as("a preempted request must send nothing").isFalse();
        Req tooBig = offer(gate, "tooBig", B, PriorityClass.INTERACTIVE, 900); // would need the started one
        assertThat(tooBig.outcome).isEqualTo("pending");
        assertThat(started.outcome).isEqualTo("admitted");
    }

    @Test
    void backloggedTenants_areServedInTheRatioOfTheirWeights() {
        TenantSpec light = new TenantSpec("light", 1, PriorityClass.DEFAULT, 0, 0);
        TenantSpec heavy = new TenantSpec("heavy", 2, PriorityClass.DEFAULT, 0, 0);
        QosGate gate = gate(TenantDirectory.empty(), 100, 0);
        Req blocker = offer(gate, "blocker", A, PriorityClass.DEFAULT, 100);
        List<Req> all = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            all.add(offer(gate, "light" + i, light, PriorityClass.DEFAULT, 100));
            all.add(offer(gate, "heavy" + i, heavy, PriorityClass.DEFAULT, 100));
        }
        events.clear();
        gate.finished(blocker.ticket, null);
        for (int i = 0; i < 300; i++) {
            Req running = all.stream().filter(r -> r.outcome.equals("admitted") && !r.ticket.released)
                    .findFirst().orElseThrow();
            gate.started(running.ticket, 0); // served: a request that ends before its first byte is refunded
            gate.finished(running.ticket, null);
        }
        long heavyServed = events.stream().limit(300).filter(e -> e.startsWith("heavy")).count();
        assertThat(heavyServed).isBetween(199L, 201L);
    }

    /** Served one at a time, in admission order: how many of the first {@code served} admissions went to {@code tenant}. */
    private long servedOneByOne(QosGate gate, List<Req> all, int served, String tenant) {
        for (int i = 0; i < served; i++) {
            Req running = all.stream().filter(r -> r.outcome.equals("admitted") && !r.ticket.released)
                    .findFirst().orElseThrow();
            gate.started(running.ticket, 0);
            gate.finished(running.ticket, null);
        }
        return events.stream().limit(served).filter(e -> e.startsWith(tenant)).count();
    }

    @Test
    void fairnessByTokens_servesSmallRequestsMoreOften_byRequests_servesTenantsInTurn() {
        TenantSpec big = new TenantSpec("big", 1, PriorityClass.DEFAULT, 0, 0);
        TenantSpec small = new TenantSpec("small", 1, PriorityClass.DEFAULT, 0, 0);
        for (QosGate.Fairness fairness : QosGate.Fairness.values()) {
            events.clear();
            QosGate gate = gate(TenantDirectory.empty(), 1_000, 0, fairness);
            Req blocker = offer(gate, "blocker", A, PriorityClass.DEFAULT, 700); // default's whole share
            List<Req> all = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                all.add(offer(gate, "big" + i, big, PriorityClass.DEFAULT, 700));
                all.add(offer(gate, "small" + i, small, PriorityClass.DEFAULT, 100));
            }
            events.clear();
            gate.finished(blocker.ticket, null);
            long bigServed = servedOneByOne(gate, all, 120, "big");
            if (fairness == QosGate.Fairness.TOKENS) {
                // equal tokens: one 700-token request per seven 100-token ones
                assertThat(bigServed).as("tokens").isBetween(14L, 16L);
            } else {
                assertThat(bigServed).as("requests").isBetween(59L, 61L);
            }
        }
    }

    @Test
    void fairnessByRequests_chargesOnePerAdmission_refundsIt_andIgnoresOutputAndCache() {
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0, QosGate.Fairness.REQUESTS);
        Req r = offer(gate, "r", A, PriorityClass.DEFAULT, 100);
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isEqualTo(1);
        gate.finished(r.ticket, null); // ended before its first byte
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isZero();
        Req s = offer(gate, "s", A, PriorityClass.DEFAULT, 100);
        gate.started(s.ticket, 50);
        gate.chargeOutput(s.ticket, 20);
        gate.finished(s.ticket, null);
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isEqualTo(1);
        Req failed = offer(gate, "failed", A, PriorityClass.DEFAULT, 100);
        gate.started(failed.ticket, 0);
        gate.finished(failed.ticket, null, true); // a worker's 5xx after its first byte: refunded
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isEqualTo(1);
    }

    @Test
    void withinTheSlack_theTenantWhoseHeadIsCachedOnTheFreedWorkerGoesFirst() {
        TenantSpec far = new TenantSpec("far", 1, PriorityClass.DEFAULT, 0, 0);
        TenantSpec near = new TenantSpec("near", 1, PriorityClass.DEFAULT, 0, 0);
        QosGate gate = gate(TenantDirectory.empty(), 100, 500);
        Req blocker = offer(gate, "blocker", A, PriorityClass.DEFAULT, 100);
        Req farReq = new Req("far", far, PriorityClass.DEFAULT, 100, Map.of());
        gate.offer(farReq.ticket);
        Req nearReq = new Req("near", near, PriorityClass.DEFAULT, 100, Map.of("w2", 80L));
        gate.offer(nearReq.ticket);
        gate.finished(blocker.ticket, "w2");
        assertThat(nearReq.outcome).isEqualTo("admitted");
        assertThat(farReq.outcome).isEqualTo("pending");
    }

    @Test
    void aClientThatLeavesWhileQueued_isRemovedAndFreesItsPlace() {
        TenantDirectory dir = dirWithClass(PriorityClass.DEFAULT, new ClassSpec(0, 0.1, 1, 60_000, 30_000, false));
        QosGate gate = gate(dir, 100, 0);
        offer(gate, "running", A, PriorityClass.DEFAULT, 100);
        Req gone = offer(gate, "gone", A, PriorityClass.DEFAULT, 100);
        gate.finished(gone.ticket, null);
        assertThat(gate.queued(PriorityClass.DEFAULT)).isZero();
        assertThat(offer(gate, "next", A, PriorityClass.DEFAULT, 100).outcome).isEqualTo("pending");
    }

    @Test
    void aRequestThatEndsBeforeItsFirstByte_isRefundedItsService() {
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0);
        Req r = offer(gate, "r", A, PriorityClass.DEFAULT, 100);
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isEqualTo(100);
        gate.finished(r.ticket, null);
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isZero();
        Req s = offer(gate, "s", A, PriorityClass.DEFAULT, 100);
        gate.started(s.ticket, 50); // 50 cached: charged at 0.1 instead of 1
        gate.chargeOutput(s.ticket, 20);
        gate.finished(s.ticket, null);
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isCloseTo(50 + 5 + 20, org.assertj.core.data.Offset.offset(1e-9));
    }

    private static TenantDirectory dirWithClass(PriorityClass c, ClassSpec spec) {
        return new TenantDirectory(Map.of(), Map.of(), Map.of(c, spec), 256);
    }
}
