package io.kvroute.bench.jmh;

import io.kvroute.router.tenant.PriorityClass;
import io.kvroute.router.tenant.QosGate;
import io.kvroute.router.tenant.QosListener;
import io.kvroute.router.tenant.QosTicket;
import io.kvroute.router.tenant.TenantDirectory;
import io.kvroute.router.tenant.TenantSpec;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The router-side queue's cost per request with many tenants: one request's whole life in the
 * {@link QosGate} (offer, first byte, 16 streamed tokens charged, finish) over 10,000 tenants.
 * {@code uncontended}: capacity to spare, every request is admitted on arrival (what QoS costs when
 * nothing waits). {@code contended}: the router is full with {@code backlog} requests waiting; each
 * finish admits the fair-share pick (VTC over the backlogged tenants) and a new request queues.
 * {@code scope}: {@code fleet} counts capacity over the fleet (one bin); {@code worker} gives each of
 * {@code workers} workers its own capacity, and each request is also placed as a dispatch places it
 * ({@link QosGate#placeable}, then {@link QosGate#place} on a worker with room), so the per-worker
 * ledger's admission scan over the candidates and the placement are in the figure.
 * Run from the repository root:
 * {@code java -cp integration-tests/target/kvroute-bench.jar org.openjdk.jmh.Main QosGateBench -f 1 -wi 3 -w 1s -i 5 -r 2s}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class QosGateBench {

    private static final QosTicket.Callbacks NOTHING = new QosTicket.Callbacks() {
        @Override
        public void admitted() {}

        @Override
        public void rejected(int status, String reason, long retryAfterSeconds) {}

        @Override
        public void preempted(long retryAfterSeconds) {}
    };

    @Param({"10000"})
    public int tenants;

    @Param({"1000"})
    public int backlog;

    @Param({"fleet", "worker"})
    public String scope;

    @Param({"4", "256"})
    public int workers;

    private TenantSpec[] specs;
    private QosGate free;
    private QosGate full;
    private final ArrayDeque<QosTicket> running = new ArrayDeque<>();
    private long nanos;
    private int next;
    /** The candidates of every request under per-worker capacity, or null (fleet-wide). */
    private java.util.function.Supplier<java.util.List<String>> candidates;

    @Setup(Level.Trial)
    public void setUp() {
        specs = new TenantSpec[tenants];
        for (int i = 0; i < tenants; i++) {
            specs[i] = new TenantSpec("t" + i, 1 + (i % 4), PriorityClass.DEFAULT, 0, 0);
        }
        java.util.List<String> ids = new java.util.ArrayList<>();
        for (int i = 0; i < workers; i++) {
            ids.add("w" + i);
        }
        java.util.List<String> pool = java.util.List.copyOf(ids);
        candidates = scope.equals("worker") ? () -> pool : null;
        QosGate.Fleet fleet = new QosGate.Fleet() {
            @Override
            public int usableWorkers() {
                return workers;
            }

            @Override
            public boolean engineSaturated() {
                return false;
            }
        };
        free = new QosGate(TenantDirectory::empty, Long.MAX_VALUE / 8, 2048, fleet, () -> nanos, QosListener.NONE);
        // 250 tokens per worker: with 1,000 waiting requests of 1,000 tokens, a few run at a time (fleet-wide:
        // 4 workers hold one; per worker: each worker holds one, an empty worker always admitting one)
        full = new QosGate(TenantDirectory::empty, 250, 2048, fleet, () -> nanos, QosListener.NONE);
        for (int i = 0; i < backlog + 1; i++) {
            full.offer(trackedTicket()); // the first runs, the rest wait
        }
    }

    private QosTicket ticket() {
        TenantSpec tenant = specs[next++ % specs.length];
        return new QosTicket(tenant, PriorityClass.DEFAULT, 1_000, 800, null, candidates, NOTHING);
    }

    /** A ticket that joins {@link #running} once the gate admits it. */
    private QosTicket trackedTicket() {
        TenantSpec tenant = specs[next++ % specs.length];
        QosTicket[] self = new QosTicket[1];
        self[0] = new QosTicket(tenant, PriorityClass.DEFAULT, 1_000, 800, null, candidates, new QosTicket.Callbacks() {
            @Override
            public void admitted() {
                running.add(self[0]);
            }

            @Override
            public void rejected(int status, String reason, long retryAfterSeconds) {}

            @Override
            public void preempted(long retryAfterSeconds) {}
        });
        return self[0];
    }

    @Benchmark
    public long uncontended() {
        nanos += 1_000;
        QosTicket t = ticket();
        free.offer(t);
        placeAsADispatch(free, t);
        free.started(t, 0);
        free.chargeOutput(t, 16);
        free.finished(t, null);
        return free.inFlightTokens();
    }

    /** The running request finishes, the drain admits the fair-share pick, and a new request joins the backlog. */
    @Benchmark
    public long contended() {
        nanos += 1_000;
        QosTicket done = running.poll();
        placeAsADispatch(full, done);
        full.started(done, 0);
        full.chargeOutput(done, 16);
        full.finished(done, null);
        full.offer(trackedTicket());
        return full.inFlightTokens();
    }

    /** Per-worker scope: what a dispatch does before sending, look at the workers with room, then place on one. */
    private void placeAsADispatch(QosGate gate, QosTicket t) {
        java.util.Set<String> room = gate.placeable(t);
        if (room != null) {
            String chosen = "w" + (next % workers);
            gate.place(t, room.contains(chosen) ? chosen : room.iterator().next(), false);
        }
    }
}
