package io.kvroute.bench.jmh;

import io.kvroute.scheduler.queue.PrefillQueueStrategy;
import io.kvroute.scheduler.queue.SchedRequest;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.List;

/**
 * Companion to {@link ReorderBenchmark} for a shared, overloaded machine: per-call median of wall
 * time AND of this thread's CPU time. On a 2-core box with a load average near 10, a call longer
 * than a scheduler time slice is often descheduled mid-call, which inflates JMH's wall-clock
 * average far beyond the work done; CPU time shows the work itself. Same ready lists as the JMH
 * benchmark.
 *
 * <p>Run: {@code java -cp integration-tests/target/kvroute-bench.jar io.kvroute.bench.jmh.ReorderCpuProbe}.
 */
public final class ReorderCpuProbe {

    private static final int WARMUP_CALLS = 2000;
    private static final int MEASURED_CALLS = 500;

    private ReorderCpuProbe() {}

    public static void main(String[] args) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        System.out.println("ready_requests strategy wall_median_us cpu_median_us");
        for (int size : new int[] {128, 1000, 10000}) {
            for (String name : PrefillQueueStrategy.NAMES) {
                ReorderBenchmark b = new ReorderBenchmark();
                b.strategy = name;
                b.readyRequests = size;
                b.setUp();
                int warmups = size >= 10000 ? WARMUP_CALLS / 4 : WARMUP_CALLS;
                long sink = 0;
                for (int i = 0; i < warmups; i++) {
                    sink += b.reorder().size();
                }
                long[] wall = new long[MEASURED_CALLS];
                long[] cpu = new long[MEASURED_CALLS];
                for (int i = 0; i < MEASURED_CALLS; i++) {
                    long c0 = threads.getCurrentThreadCpuTime();
                    long t0 = System.nanoTime();
                    List<SchedRequest> out = b.reorder();
                    wall[i] = System.nanoTime() - t0;
                    cpu[i] = threads.getCurrentThreadCpuTime() - c0;
                    sink += out.size();
                }
                System.out.printf("%d %s %.1f %.1f%n", size, name, median(wall) / 1e3, median(cpu) / 1e3);
                if (sink == 42) {
                    System.out.println(); // keeps the results alive
                }
            }
        }
    }

    private static double median(long[] xs) {
        long[] s = xs.clone();
        Arrays.sort(s);
        return (s[(s.length - 1) / 2] + s[s.length / 2]) / 2.0;
    }
}
