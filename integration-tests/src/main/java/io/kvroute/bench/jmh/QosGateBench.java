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

    private TenantSpec[] specs;
    private QosGate free;
    private QosGate full;
    private final ArrayDeque<QosTicket> running = new ArrayDeque<>();
    private long nanos;
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        specs = new TenantSpec[tenants];
        for (int i = 0; i < tenants; i++) {
            specs[i] = new TenantSpec("t" + i, 1 + (i % 4), PriorityClass.DEFAULT, 0, 0);
        }
        QosGate.Fleet fleet = new QosGate.Fleet() {
            @Override
            public int usableWorkers() {
                return 4;
            }

            @Override
            public boolean engineSaturated() {
                return false;
            }
        };
        free = new QosGate(TenantDirectory::empty, Long.MAX_VALUE / 8, 2048, fleet, () -> nanos, QosListener.NONE);
        // 4 workers x 250 tokens: with 1,000 waiting requests of 1,000 tokens, one runs at a time
        full = new QosGate(TenantDirectory::empty, 250, 2048, fleet, () -> nanos, QosListener.NONE);
        for (int i = 0; i < backlog + 1; i++) {
            full.offer(trackedTicket()); // the first runs, the rest wait
        }
    }

    private QosTicket ticket() {
        TenantSpec tenant = specs[next++ % specs.length];
        return new QosTicket(tenant, PriorityClass.DEFAULT, 1_000, 800, null, NOTHING);
    }

    /** A ticket that joins {@link #running} once the gate admits it. */
    private QosTicket trackedTicket() {
        TenantSpec tenant = specs[next++ % specs.length];
        QosTicket[] self = new QosTicket[1];
        self[0] = new QosTicket(tenant, PriorityClass.DEFAULT, 1_000, 800, null, new QosTicket.Callbacks() {
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
        full.started(done, 0);
        full.chargeOutput(done, 16);
        full.finished(done, null);
        full.offer(trackedTicket());
        return full.inFlightTokens();
    }
}
