package io.kvroute.bench.load;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.load.LoadPlaneConfig;
import io.kvroute.router.load.WorkerLoad;
import io.kvroute.scheduler.report.LoadPublisher;
import io.kvroute.protocol.LoadStat;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Ingest benchmark of the router load plane (docs/benchmarks-load.md).
 *
 * <p>{@code workers} real {@link LoadPublisher}s (one PUB socket each, loopback tcp, HWM 8,
 * publishing on every step) are stepped by one driver thread at {@code rate} reports per second in
 * total, round robin, each step carrying a changed stat. One {@link LoadPlane} subscribes to all.
 * Measured over {@code seconds}: CPU time of the load-plane thread (ThreadMXBean) as a share of
 * one core; reports sent vs received, and the loss the plane itself sees through {@code seq} gaps;
 * and the age of the data a request would see (a sampler thread captures a snapshot every 1 ms
 * and records, for one worker in turn, snapshot time minus that worker's captured_at).
 *
 * <p>Usage: {@code LoadPlaneBench [workers=64] [rate=10000] [seconds=10] [batchWindowMs=5]}.
 */
public final class LoadPlaneBench {
    private LoadPlaneBench() {}

    public static void main(String[] args) throws Exception {
        int workers = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        int rate = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        int batchWindowMs = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LoadPlaneConfig cfg = LoadPlaneConfig.defaults().withBatchWindow(Duration.ofMillis(batchWindowMs));
        List<LoadPublisher> pubs = new ArrayList<>();
        try (LoadPlane plane = new LoadPlane(cfg, System::nanoTime, registry)) {
            plane.start();
            for (int w = 0; w < workers; w++) {
                LoadPublisher p = LoadPublisher.bind("tcp://127.0.0.1:*", 1,
                        LoadPublisher.Options.defaults().withEverySteps(1));
                pubs.add(p);
                plane.addWorker(workerId(w), p.endpoints());
            }
            // Join phase: the first reports after connect are lost (slow joiner); step until all are fresh.
            long joinDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            int step = 0;
            while (!allFresh(plane.snapshot(), workers)) {
                if (System.nanoTime() > joinDeadline) {
                    throw new IllegalStateException("not every worker reported within 20 s");
                }
                for (int w = 0; w < workers; w++) {
                    pubs.get(w).onStep(stat(step));
                }
                step++;
                Thread.sleep(5);
            }
            Thread.sleep(200); // join-phase reports still in flight land before the baseline; lost join reports
                               // leave no sequence gap, so there is no count to wait for here
            long planeTid = threadId("kvroute-load-plane");
            double received0 = registry.get("kvroute.load.reports.received").counter().count();
            double missed0 = registry.get("kvroute.load.reports.missed").counter().count();
            long sent0 = pubs.stream().mapToLong(LoadPublisher::sentCount).sum();
            long cpu0 = mx.getThreadCpuTime(planeTid);
            long wall0 = System.nanoTime();

            AtomicBoolean stop = new AtomicBoolean();
            Histogram ageMicros = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
            long[] sampleStats = new long[2]; // [samples, missing]
            Thread sampler = new Thread(() -> {
                int w = 0;
                while (!stop.get()) {
                    EngineLoadSnapshot s = plane.snapshot();
                    Optional<WorkerLoad> l = s.fresh(workerId(w));
                    w = (w + 1) % workers;
                    sampleStats[0]++;
                    if (l.isPresent()) {
                        ageMicros.recordValue(Math.max(0, (s.nowNanos() - l.get().capturedAtNanos()) / 1000));
                    } else {
                        sampleStats[1]++;
                    }
                    LockSupport.parkNanos(1_000_000);
                }
            }, "bench-sampler");
            sampler.start();

            long steps = 0;
            long periodNanos = 1_000_000; // pace in 1 ms ticks
            double perTick = rate / 1000.0;
            double owed = 0;
            long next = System.nanoTime();
            long end = next + TimeUnit.SECONDS.toNanos(seconds);
            int w = 0;
            while (System.nanoTime() < end) {
                owed += perTick;
                while (owed >= 1) {
                    pubs.get(w).onStep(stat(step++));
                    w = (w + 1) % workers;
                    owed -= 1;
                    steps++;
                }
                next += periodNanos;
                long sleep = next - System.nanoTime();
                if (sleep > 0) {
                    LockSupport.parkNanos(sleep);
                }
            }
            long wall = System.nanoTime() - wall0;
            long cpu = mx.getThreadCpuTime(planeTid) - cpu0;
            stop.set(true);
            sampler.join();
            awaitAccounted(pubs, registry, sent0, received0 + missed0); // in-flight reports land before counting
            long sent = pubs.stream().mapToLong(LoadPublisher::sentCount).sum() - sent0;
            double received = registry.get("kvroute.load.reports.received").counter().count() - received0;
            double missed = registry.get("kvroute.load.reports.missed").counter().count() - missed0;
            double malformed = registry.get("kvroute.load.reports.malformed").counters().stream()
                    .mapToDouble(c -> c.count()).sum();

            System.out.printf(Locale.ROOT, "LoadPlaneBench workers=%d rate=%d/s seconds=%d batchWindowMs=%d cores=%d%n",
                    workers, rate, seconds, batchWindowMs, Runtime.getRuntime().availableProcessors());
            System.out.printf(Locale.ROOT, "steps=%d (%.0f/s) sent=%d (%.0f/s) conflatedByHandoff=%d%n",
                    steps, steps * 1e9 / wall, sent, sent * 1e9 / wall, steps - sent);
            System.out.printf(Locale.ROOT, "received=%.0f missedBySeq=%.0f lossBySeq=%.4f%% sentMinusReceived=%.0f malformed=%.0f%n",
                    received, missed, 100.0 * missed / Math.max(1, received + missed), sent - received, malformed);
            System.out.printf(Locale.ROOT, "loadPlaneThreadCpu=%.1f ms over %.2f s = %.2f%% of one core%n",
                    cpu / 1e6, wall / 1e9, 100.0 * cpu / wall);
            System.out.printf(Locale.ROOT, "snapshotAge samples=%d notFresh=%d p50=%.2f ms p90=%.2f ms p99=%.2f ms max=%.2f ms%n",
                    sampleStats[0], sampleStats[1], ageMicros.getValueAtPercentile(50) / 1000.0,
                    ageMicros.getValueAtPercentile(90) / 1000.0, ageMicros.getValueAtPercentile(99) / 1000.0,
                    ageMicros.getMaxValue() / 1000.0);
        } finally {
            for (LoadPublisher p : pubs) {
                p.close();
            }
        }
    }

    /**
     * Waits (at most 2 s) until every report sent since the baseline is received or counted missed.
     * The load plane has no completion callback, so this checks once per millisecond and returns as
     * soon as the counts add up.
     */
    private static void awaitAccounted(List<LoadPublisher> pubs, SimpleMeterRegistry registry, long sent0,
            double seen0) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < deadline) {
            long sent = pubs.stream().mapToLong(LoadPublisher::sentCount).sum() - sent0;
            double seen = registry.get("kvroute.load.reports.received").counter().count()
                    + registry.get("kvroute.load.reports.missed").counter().count() - seen0;
            if (seen >= sent) {
                return;
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    private static String workerId(int w) {
        return "http://worker-" + w + ":8000";
    }

    private static LoadStat stat(int step) {
        return new LoadStat(step % 64, step % 17, 1000L + step, 1_000_000, 0,
                new LoadStat.Extension(step % 5000, 2000L + step, 256, 10L * step, 5L * step));
    }

    private static boolean allFresh(EngineLoadSnapshot s, int workers) {
        for (int w = 0; w < workers; w++) {
            if (!s.isFresh(workerId(w))) {
                return false;
            }
        }
        return true;
    }

    private static long threadId(String name) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name)) {
                return t.getId();
            }
        }
        throw new IllegalStateException("no thread named " + name);
    }
}
