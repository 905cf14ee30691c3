package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link QosGate} with per-worker capacity ({@code --qos-capacity-scope worker}) on a fake clock: a request is
 * admitted onto a candidate worker with room for its tokens, the dispatch may move it only to another worker with
 * room, and the worker that frees capacity serves the waiter whose prompt it holds.
 */
class QosGatePerWorkerTest {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private List<String> pool = new ArrayList<>(List.of("w1", "w2"));
    private final List<String> events = new ArrayList<>();

    private static final TenantSpec A = new TenantSpec("a", 1, PriorityClass.SYSTEM, 0, 0);
    private static final TenantSpec B = new TenantSpec("b", 1, PriorityClass.SYSTEM, 0, 0);
    /** No reservations, so a worker's whole capacity is every class's: the tests read in plain tokens. */
    private static final TenantDirectory NO_RESERVATIONS = noReservations();

    private QosGate gate(TenantDirectory dir, long capacityPerWorker, double slack) {
        return new QosGate(() -> dir, capacityPerWorker, slack, new FakeFleet(() -> pool.size()), nanos::get, QosListener.NONE);
    }

    final class Req implements QosTicket.Callbacks {
        final String name;
        final QosTicket ticket;
        String outcome = "pending";
        int callbacks;

        Req(String name, TenantSpec tenant, PriorityClass c, long cost, Map<String, Long> cached) {
            this.name = name;
            this.ticket = new QosTicket(tenant, c, cost, cost, cached == null ? null : w -> cached.getOrDefault(w, 0L),
                    () -> List.copyOf(pool), this);
        }

        @Override
        public void admitted() {
            outcome = "admitted";
            callbacks++;
            events.add(name);
        }

        @Override
        public void rejected(int status, String reason, long retryAfterSeconds) {
            outcome = status + " " + reason;
            callbacks++;
        }

        @Override
        public void preempted(long retryAfterSeconds) {
            outcome = "preempted";
        }
    }

    private Req offer(QosGate gate, String name, TenantSpec tenant, PriorityClass c, long cost, Map<String, Long> cached) {
        Req r = new Req(name, tenant, c, cost, cached);
        gate.offer(r.ticket);
        return r;
    }

    @Test
    void aRequestIsAdmittedOntoAWorkerWithRoom_andWaitsWhenNoWorkerHasRoom() {
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req r1 = offer(gate, "r1", A, PriorityClass.DEFAULT, 600, null);
        Req r2 = offer(gate, "r2", A, PriorityClass.DEFAULT, 600, null);
        Req r3 = offer(gate, "r3", A, PriorityClass.DEFAULT, 600, null);
        assertThat(List.of(r1.outcome, r2.outcome)).containsOnly("admitted");
        assertThat(r3.outcome).as("600 + 600 fits neither worker, though the fleet has 800 free").isEqualTo("pending");
        assertThat(Set.of(r1.ticket.holder, r2.ticket.holder)).containsExactlyInAnyOrder("w1", "w2");
        gate.finished(r2.ticket, null);
        assertThat(r3.outcome).isEqualTo("admitted");
        assertThat(r3.ticket.holder).isEqualTo(r2.ticket.holder);
    }

    @Test
    void placement_prefersTheWorkerHoldingThePrompt_thenTheLeastLoaded() {
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req cold = offer(gate, "cold", A, PriorityClass.DEFAULT, 100, null);
        Req warm = offer(gate, "warm", A, PriorityClass.DEFAULT, 100, Map.of("w2", 50L));
        Req next = offer(gate, "next", A, PriorityClass.DEFAULT, 100, null);
        assertThat(cold.ticket.holder).isEqualTo("w1");
        assertThat(warm.ticket.holder).isEqualTo("w2");
        assertThat(next.ticket.holder).as("a tie on load: the first listed").isEqualTo("w1");
        Req cachedOnFull = offer(gate, "cachedOnFull", A, PriorityClass.DEFAULT, 850, Map.of("w1", 500L));
        assertThat(cachedOnFull.ticket.holder).as("its prefix holder w1 has no room: w2 does").isEqualTo("w2");
    }

    @Test
    void placeable_listsTheHolderAndTheWorkersWithRoom_andPlaceMovesTheTokens_freeingTheOldWorkerForTheQueue() {
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req big = offer(gate, "big", A, PriorityClass.DEFAULT, 900, null); // w1
        Req small = offer(gate, "small", A, PriorityClass.DEFAULT, 300, null); // w2, least loaded
        assertThat(small.ticket.holder).isEqualTo("w2");
        assertThat(gate.placeable(small.ticket)).containsExactly("w2");
        assertThat(gate.place(small.ticket, "w1", false)).as("w1 has 100 free, not 300").isFalse();
        assertThat(gate.inFlightByBin()).isEqualTo(Map.of("w1", 900L, "w2", 300L));
        Req waiter = offer(gate, "waiter", B, PriorityClass.DEFAULT, 800, null);
        assertThat(waiter.outcome).isEqualTo("pending");
        gate.finished(big.ticket, null);
        assertThat(waiter.outcome).as("w1 freed: the waiter takes it").isEqualTo("admitted");
        assertThat(waiter.ticket.holder).isEqualTo("w1");

        Req other = offer(gate, "other", B, PriorityClass.DEFAULT, 600, null); // only w2 has room (300 + 600)
        assertThat(other.ticket.holder).isEqualTo("w2");
        assertThat(gate.placeable(other.ticket)).containsExactly("w2");
        gate.finished(waiter.ticket, null);
        assertThat(gate.placeable(other.ticket)).containsExactlyInAnyOrder("w1", "w2");
        assertThat(gate.place(other.ticket, "w1", false)).isTrue();
        assertThat(gate.inFlightByBin()).isEqualTo(Map.of("w1", 600L, "w2", 300L));
        assertThat(gate.place(small.ticket, "w1", true)).as("forced: a retry whose workers are gone").isTrue();
        assertThat(gate.inFlightByBin()).isEqualTo(Map.of("w1", 900L));
    }

    /**
     * The placement race: r1 and r2 are admitted (r1 on w1, r2 on w2) and each dispatch looks before either places:
     * both see w3 with room for one of them. r1 places on w3 first; r2's placement on w3 is then refused, and its
     * next look no longer lists w3, so w3 never holds both.
     */
    @Test
    void twoDispatchesRacingForOneWorkersRoom_onlyTheFirstPlacementLands() {
        pool = new ArrayList<>(List.of("w1", "w2", "w3"));
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req r1 = offer(gate, "r1", A, PriorityClass.DEFAULT, 600, null);
        Req r2 = offer(gate, "r2", A, PriorityClass.DEFAULT, 600, null);
        Req r0 = offer(gate, "r0", A, PriorityClass.DEFAULT, 300, null); // w3: room left for one 600 there
        assertThat(List.of(r1.ticket.holder, r2.ticket.holder, r0.ticket.holder)).containsExactly("w1", "w2", "w3");
        assertThat(gate.placeable(r1.ticket)).containsExactlyInAnyOrder("w1", "w3");
        assertThat(gate.placeable(r2.ticket)).containsExactlyInAnyOrder("w2", "w3");
        assertThat(gate.place(r1.ticket, "w3", false)).isTrue();
        assertThat(gate.place(r2.ticket, "w3", false)).as("w3's room went to r1").isFalse();
        assertThat(gate.placeable(r2.ticket)).containsExactlyInAnyOrder("w1", "w2");
        assertThat(gate.inFlightByBin()).isEqualTo(Map.of("w2", 600L, "w3", 900L));
    }

    @Test
    void movingARequestAway_servesTheWaiterOnTheWorkerItLeft() {
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        pool = new ArrayList<>(List.of("w1"));
        Req first = offer(gate, "first", A, PriorityClass.DEFAULT, 700, null);
        Req waiter = offer(gate, "waiter", B, PriorityClass.DEFAULT, 700, null);
        assertThat(waiter.outcome).isEqualTo("pending");
        pool = new ArrayList<>(List.of("w1", "w2")); // a worker joins; nothing frees w1 yet
        assertThat(gate.place(first.ticket, "w2", false)).isTrue();
        assertThat(waiter.outcome).as("the dispatch routed the first request to w2: w1 is free").isEqualTo("admitted");
        assertThat(waiter.ticket.holder).isEqualTo("w1");
    }

    @Test
    void theWorkerThatFreesCapacity_servesTheWaiterWhosePromptItHolds() {
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 1_000_000);
        Req onW1 = offer(gate, "onW1", A, PriorityClass.DEFAULT, 1_000, null);
        Req onW2 = offer(gate, "onW2", A, PriorityClass.DEFAULT, 1_000, null);
        Req wantsW1 = offer(gate, "wantsW1", A, PriorityClass.DEFAULT, 600, Map.of("w1", 400L));
        Req wantsW2 = offer(gate, "wantsW2", B, PriorityClass.DEFAULT, 600, Map.of("w2", 400L));
        gate.finished(onW2.ticket, "unknown-url"); // the holder names the freed worker, not the adapter's guess
        assertThat(wantsW2.outcome).isEqualTo("admitted");
        assertThat(wantsW1.outcome).isEqualTo("pending");
        assertThat(wantsW2.ticket.holder).isEqualTo("w2");
        gate.finished(onW1.ticket, null);
        assertThat(wantsW1.ticket.holder).isEqualTo("w1");
    }

    /**
     * PD: tokens are held on the decode worker, the prompt's cache is on the prefill worker. When a PD request whose
     * prefill ran on p2 ends, the waiter cached on p2 goes first, not the minimum counter's head cached on p1.
     */
    @Test
    void aPdRequestsPrefillWorker_isWhereTheQueueLooksForCachedWaiters_whenItEnds() {
        pool = new ArrayList<>(List.of("d1"));
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 1_000_000);
        Req running = offer(gate, "running", A, PriorityClass.DEFAULT, 1_000, null);
        gate.prefixOn(running.ticket, "p2");
        Req cachedOnP1 = offer(gate, "cachedOnP1", A, PriorityClass.DEFAULT, 1_000, Map.of("p1", 400L));
        Req cachedOnP2 = offer(gate, "cachedOnP2", B, PriorityClass.DEFAULT, 1_000, Map.of("p2", 400L));
        assertThat(gate.counter(PriorityClass.DEFAULT, "a")).isGreaterThanOrEqualTo(gate.counter(PriorityClass.DEFAULT, "b"));
        gate.finished(running.ticket, "d1");
        assertThat(cachedOnP2.outcome).isEqualTo("admitted");
        assertThat(cachedOnP2.ticket.holder).isEqualTo("d1");
        assertThat(cachedOnP1.outcome).isEqualTo("pending");
    }

    @Test
    void aRequestLargerThanAWorker_isAdmittedAloneOnAnEmptyWorker_neverBesideOthers() {
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req small = offer(gate, "small", A, PriorityClass.DEFAULT, 10, null); // w1
        Req huge = offer(gate, "huge", A, PriorityClass.DEFAULT, 5_000, null);
        assertThat(huge.outcome).isEqualTo("admitted");
        assertThat(huge.ticket.holder).isEqualTo("w2");
        Req huge2 = offer(gate, "huge2", A, PriorityClass.DEFAULT, 5_000, null);
        assertThat(huge2.outcome).isEqualTo("pending");
        gate.finished(small.ticket, null);
        assertThat(huge2.outcome).isEqualTo("admitted");
        assertThat(huge2.ticket.holder).isEqualTo("w1");
    }

    @Test
    void reservationsHoldPerWorker() {
        // defaults: system 5 % and interactive 25 % of each worker are held back from default
        QosGate gate = gate(TenantDirectory.empty(), 1_000, 0);
        Req d1 = offer(gate, "d1", A, PriorityClass.DEFAULT, 700, null);
        Req d2 = offer(gate, "d2", A, PriorityClass.DEFAULT, 700, null);
        Req d3 = offer(gate, "d3", A, PriorityClass.DEFAULT, 10, null);
        assertThat(List.of(d1.outcome, d2.outcome)).containsOnly("admitted");
        assertThat(d3.outcome).as("each worker's 300 is held back for the classes above").isEqualTo("pending");
        Req i1 = offer(gate, "i1", A, PriorityClass.INTERACTIVE, 250, null);
        assertThat(i1.outcome).isEqualTo("admitted");
    }

    @Test
    void preemption_takesVictimsFromOneWorker_theOneWhereThatMakesItFit() {
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req b1 = offer(gate, "b1", A, PriorityClass.BATCH, 900, null); // w1
        Req b2 = offer(gate, "b2", A, PriorityClass.BATCH, 600, null); // w2
        Req b3 = offer(gate, "b3", A, PriorityClass.BATCH, 300, null); // w2
        assertThat(List.of(b1.ticket.holder, b2.ticket.holder, b3.ticket.holder)).containsExactly("w1", "w2", "w2");
        gate.started(b1.ticket, 0); // w1's only victim has sent bytes
        Req inter = offer(gate, "inter", B, PriorityClass.INTERACTIVE, 500, null);
        assertThat(inter.outcome).isEqualTo("admitted");
        assertThat(inter.ticket.holder).isEqualTo("w2");
        assertThat(b3.outcome).as("newest first on w2").isEqualTo("preempted");
        assertThat(b2.outcome).as("b3's 300 alone leaves 600 + 500 > 1000: b2 goes too").isEqualTo("preempted");
        assertThat(b1.outcome).isEqualTo("admitted");
        assertThat(gate.inFlightByBin()).isEqualTo(Map.of("w1", 900L, "w2", 500L));
    }

    /**
     * A request larger than a whole worker fits only on an empty one, so preemption must be willing to empty a
     * worker for it: evicting every request there that has sent nothing. Before, the shortfall was counted against
     * the worker's capacity (600 held + 1,500 asked - 1,000 = 1,100 to free of only 600 held), so no eviction could
     * ever make room and the interactive request waited behind batch work.
     */
    @Test
    void aRequestLargerThanAWorker_preemptsEveryRequestThatHasSentNothing_andRunsAloneThere() {
        pool = new ArrayList<>(List.of("w1"));
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req b1 = offer(gate, "b1", A, PriorityClass.BATCH, 300, null);
        Req b2 = offer(gate, "b2", A, PriorityClass.BATCH, 300, null);
        Req huge = offer(gate, "huge", B, PriorityClass.INTERACTIVE, 1_500, null);
        assertThat(List.of(b1.outcome, b2.outcome)).containsOnly("preempted");
        assertThat(huge.outcome).isEqualTo("admitted");
        assertThat(gate.inFlightByBin()).isEqualTo(Map.of("w1", 1_500L));
    }

    /** Emptying the worker is the only way to fit; a request there that has sent bytes is never cut, so none goes. */
    @Test
    void aRequestLargerThanAWorker_preemptsNothing_whileARequestThereHasSentBytes() {
        pool = new ArrayList<>(List.of("w1"));
        QosGate gate = gate(NO_RESERVATIONS, 1_000, 0);
        Req b1 = offer(gate, "b1", A, PriorityClass.BATCH, 300, null);
        Req b2 = offer(gate, "b2", A, PriorityClass.BATCH, 300, null);
        assertThat(gate.started(b1.ticket, 0)).isTrue();
        Req huge = offer(gate, "huge", B, PriorityClass.INTERACTIVE, 1_500, null);
        assertThat(List.of(b1.outcome, b2.outcome)).as("b2 alone would not empty w1: nobody is cut")
                .containsOnly("admitted");
        assertThat(huge.outcome).isEqualTo("pending");
        gate.finished(b1.ticket, "w1");
        gate.finished(b2.ticket, "w1");
        assertThat(huge.outcome).isEqualTo("admitted");
    }

    @Test
    void aRequestWhoseWorkersAllLeft_isAnswered503NoWorker_atArrivalOrWhenItsWaitEnds() {
        TenantDirectory dir = new TenantDirectory(Map.of(), Map.of(), Map.of(PriorityClass.DEFAULT,
                new ClassSpec(0, 0, 10, 2_000, 30_000, false)), 256);
        QosGate gate = gate(dir, 1_000, 0);
        offer(gate, "r1", A, PriorityClass.DEFAULT, 1_000, null);
        offer(gate, "r2", A, PriorityClass.DEFAULT, 1_000, null);
        Req waiting = offer(gate, "waiting", A, PriorityClass.DEFAULT, 1_000, null);
        pool = new ArrayList<>();
        Req none = offer(gate, "none", A, PriorityClass.DEFAULT, 1, null);
        assertThat(none.outcome).isEqualTo("503 no_worker");
        nanos.addAndGet(2_000_000_000L);
        gate.tick();
        assertThat(waiting.outcome).isEqualTo("503 no_worker");
    }

    private static TenantDirectory noReservations() {
        Map<PriorityClass, ClassSpec> specs = new HashMap<>();
        for (PriorityClass c : PriorityClass.values()) {
            ClassSpec d = ClassSpec.defaultFor(c);
            specs.put(c, new ClassSpec(0, 0, d.queueCap(), d.queueTimeoutMillis(), d.starvationMillis(), d.canPreempt()));
        }
        return new TenantDirectory(Map.of(), Map.of(), specs, 256);
    }
}
