package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link QosGate} with per-worker capacity under random operations (offers of every class and size, first bytes,
 * ends, clients leaving, dispatches moving a request to another worker, workers leaving and joining, ticks on a
 * fake clock), checked after every operation against a naive model that keeps its own ledger from the callbacks.
 * The invariants live in {@link #check}:
 * <ul>
 *   <li>the gate's tokens in flight per worker are the model's (the costs of the admitted, unended requests it
 *       holds there);</li>
 *   <li>no worker holds more than {@code CAPACITY} tokens, except a worker holding exactly one request: a request
 *       larger than a worker is admitted alone on an empty worker rather than never (the one rule that lets a
 *       worker go over);</li>
 *   <li>while a worker of the pool is idle, every tenant's first waiting request in every class is inside its wait
 *       for its prefix holder ({@code --qos-holder-wait-ms}, the runs with the wait on): an empty worker has room for
 *       any request, so any other such head would have been admitted, the gate passing over the heads that wait for
 *       their holder (without the wait: no worker is idle while requests wait);</li>
 *   <li>a request admitted while inside its wait for its holder is admitted onto that holder, unless the holder
 *       left the pool;</li>
 *   <li>{@link QosGate#placeable} and {@link QosGate#place} agree: a worker outside the placeable set is refused,
 *       one inside it accepted;</li>
 *   <li>every request gets exactly one of admitted or rejected (none when its client left while it waited), and
 *       preempted only after admitted and before its first byte; at the end every request has been answered.</li>
 * </ul>
 */
class QosGatePerWorkerModelTest {

    private static final long CAPACITY = 1_000;
    private static final List<String> WORKERS = List.of("w1", "w2", "w3");
    private static final TenantSpec[] TENANTS = {
        new TenantSpec("t1", 1, PriorityClass.SYSTEM, 0, 0),
        new TenantSpec("t2", 2, PriorityClass.SYSTEM, 0, 0),
        new TenantSpec("t3", 1, PriorityClass.SYSTEM, 0, 0)};

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final List<String> pool = new ArrayList<>(WORKERS);

    /** The model's view of one request. */
    private final class Req implements QosTicket.Callbacks {
        final QosTicket ticket;
        int admitted;
        int rejected;
        int preempted;
        boolean started;
        boolean ended;
        boolean left; // its client left while it waited: no answer is owed
        String worker; // the model's ledger: where its tokens are while admitted and unended

        Req(TenantSpec tenant, PriorityClass c, long cost, Map<String, Long> cached) {
            ticket = new QosTicket(tenant, c, cost, cost, w -> cached.getOrDefault(w, 0L), () -> List.copyOf(pool), this);
        }

        @Override
        public void admitted() {
            assertThat(admitted + rejected).as("one answer per request").isZero();
            admitted++;
            worker = ticket.holder;
            assertThat(worker).isNotNull();
            if (waitingForHolder(ticket) && pool.contains(ticket.holderWaitFor)) { // a holder that left is not waited for
                assertThat(worker).as("inside its holder wait: only on its holder").isEqualTo(ticket.holderWaitFor);
            }
        }

        @Override
        public void rejected(int status, String reason, long retryAfterSeconds) {
            assertThat(admitted + rejected).as("one answer per request").isZero();
            rejected++;
        }

        @Override
        public void preempted(long retryAfterSeconds) {
            assertThat(admitted).as("preempted only once admitted").isEqualTo(1);
            assertThat(started || ended || preempted > 0).as("preempted only before its first byte").isFalse();
            preempted++;
            worker = null;
        }

        boolean holding() {
            return admitted == 1 && !ended && preempted == 0;
        }

        boolean waiting() {
            return admitted == 0 && rejected == 0 && !ended;
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void perWorkerTokensInFlight_matchTheModel_andStayWithinCapacity(long seed) {
        run(seed, 0);
    }

    /** The same with the wait for the prefix holder on (1.5 s: about one of the clock's random steps). */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void withTheHolderWaitOn_perWorkerTokensInFlight_matchTheModel_andNothingWaitsPastItsBound(long seed) {
        run(seed, 1_500_000_000L);
    }

    private boolean waitingForHolder(QosTicket t) {
        return t.holderWaitFor != null && nanos.get() - t.holderWaitUntilNanos < 0;
    }

    private void run(long seed, long holderWaitNanos) {
        Random random = new Random(seed);
        TenantDirectory dir = TenantDirectory.empty(); // the default classes: reservations, preemption, timeouts
        QosGate gate = new QosGate(() -> dir, CAPACITY, 500, QosGate.Fairness.TOKENS, holderWaitNanos,
                new FakeFleet(pool::size), nanos::get, QosListener.NONE);
        List<Req> all = new ArrayList<>();
        for (int step = 0; step < 3_000; step++) {
            int op = random.nextInt(100);
            List<Req> holding = all.stream().filter(Req::holding).toList();
            if (op < 35) {
                PriorityClass c = PriorityClass.values()[random.nextInt(PriorityClass.values().length)];
                long cost = random.nextInt(20) == 0 ? CAPACITY + random.nextInt(2_000) : 1 + random.nextInt(600);
                Map<String, Long> cached = new HashMap<>();
                cached.put(WORKERS.get(random.nextInt(WORKERS.size())), (long) random.nextInt((int) cost + 1));
                Req r = new Req(TENANTS[random.nextInt(TENANTS.length)], c, cost, cached);
                all.add(r);
                gate.offer(r.ticket);
            } else if (op < 50 && !holding.isEmpty()) {
                Req r = holding.get(random.nextInt(holding.size()));
                if (gate.started(r.ticket, random.nextInt(100))) {
                    r.started = true;
                }
            } else if (op < 75 && !holding.isEmpty()) {
                List<Req> endable = all.stream().filter(r -> r.holding() || (r.preempted > 0 && !r.ended)).toList();
                Req r = endable.get(random.nextInt(endable.size())); // a preempted one's adapter ends it too
                r.ended = true;
                r.worker = null;
                gate.finished(r.ticket, null, random.nextBoolean());
            } else if (op < 78) {
                List<Req> waiting = all.stream().filter(Req::waiting).toList();
                if (!waiting.isEmpty()) {
                    Req r = waiting.get(random.nextInt(waiting.size()));
                    r.ended = true; // the client left while it waited
                    r.left = true;
                    gate.finished(r.ticket, null);
                }
            } else if (op < 92 && !holding.isEmpty()) {
                Req r = holding.get(random.nextInt(holding.size()));
                Set<String> placeable = gate.placeable(r.ticket);
                String to = WORKERS.get(random.nextInt(WORKERS.size()));
                boolean placed = gate.place(r.ticket, to, false);
                assertThat(placed).as("place agrees with placeable for %s on %s", placeable, to)
                        .isEqualTo(placeable.contains(to));
                if (placed && r.holding()) {
                    r.worker = to;
                }
            } else if (op < 95) {
                String w = WORKERS.get(random.nextInt(WORKERS.size()));
                if (!pool.remove(w)) {
                    pool.add(w);
                }
                gate.tick(); // a pool change is seen at the next tick at the latest
            } else {
                nanos.addAndGet(random.nextInt(3_000) * 1_000_000L);
                gate.tick();
            }
            check(gate, all, step);
        }
        // the end: every worker back, every request ended or answered, nothing left waiting
        pool.clear();
        pool.addAll(WORKERS);
        for (int round = 0; round < 1_000 && all.stream().anyMatch(r -> r.holding() || r.waiting()); round++) {
            for (Req r : all) {
                if (r.holding()) {
                    r.ended = true;
                    r.worker = null;
                    gate.finished(r.ticket, null);
                }
            }
            nanos.addAndGet(1_000_000_000L);
            gate.tick();
            check(gate, all, -1);
        }
        for (Req r : all) {
            assertThat(r.admitted + r.rejected).as("every request answered once: %s", r.ticket).isEqualTo(r.left ? 0 : 1);
        }
        assertThat(gate.inFlightTokens()).isZero();
        assertThat(gate.inFlightByBin()).isEmpty();
    }

    private void check(QosGate gate, List<Req> all, int step) {
        Map<String, Long> modelTokens = new LinkedHashMap<>();
        Map<String, Integer> modelRequests = new HashMap<>();
        for (Req r : all) {
            if (r.holding()) {
                modelTokens.merge(r.worker, r.ticket.costTokens(), Long::sum);
                modelRequests.merge(r.worker, 1, Integer::sum);
            }
        }
        assertThat(gate.inFlightByBin()).as("step %d: tokens in flight per worker", step).isEqualTo(modelTokens);
        modelTokens.forEach((w, tokens) -> {
            if (tokens > CAPACITY) {
                assertThat(modelRequests.get(w)).as("step %d: %s holds %d tokens, over capacity only alone", step, w,
                        tokens).isEqualTo(1);
            }
        });
        String idle = pool.stream().filter(w -> !modelTokens.containsKey(w)).findFirst().orElse(null);
        if (idle != null) {
            Set<String> tenantsSeen = new HashSet<>();
            for (Req r : all) { // in offer order: the first waiting request of a tenant in a class is its head
                if (r.waiting() && tenantsSeen.add(r.ticket.tenant().name() + "/" + r.ticket.priority())) {
                    assertThat(waitingForHolder(r.ticket) && pool.contains(r.ticket.holderWaitFor))
                            .as("step %d: %s idle while %s waits, not for its holder", step, idle, r.ticket).isTrue();
                }
            }
        }
    }
}
