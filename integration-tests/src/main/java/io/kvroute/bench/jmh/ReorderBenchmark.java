package io.kvroute.bench.jmh;

import io.kvroute.scheduler.queue.PrefillQueueStrategy;
import io.kvroute.scheduler.queue.SchedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Cost of one {@code reorder} call per strategy and ready-list length: the per-step scheduling
 * overhead the engine pays before batch selection. HRRN runs its full sort at every length (no
 * FCFS fallback). The ready list mixes 10% decode requests, 3% continuation segments and prefill
 * prompts of 64..16384 tokens with spread arrival counters; HRRN's service costs are bound on the
 * first (warm-up) call, which is the steady state. Results: docs/benchmarks-scheduler.md.
 *
 * <p>Run: {@code java -cp integration-tests/target/kvroute-bench.jar org.openjdk.jmh.Main Reorder
 * -f 1 -wi 3 -w 1s -i 5 -r 1s}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ReorderBenchmark {

    @Param({"default", "promote_shortest", "hrrn"})
    public String strategy;

    @Param({"128", "1000", "10000"})
    public int readyRequests;

    private PrefillQueueStrategy queueStrategy;
    private List<SchedRequest> ready;
    private long processedPrefillTokens;

    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(2002);
        queueStrategy = PrefillQueueStrategy.forName(strategy);
        ready = new ArrayList<>(readyRequests);
        processedPrefillTokens = 50_000_000L;
        for (int i = 0; i < readyRequests; i++) {
            int inputLen = rnd.nextInt(10) < 7 ? 64 + rnd.nextInt(1024) : 4096 + rnd.nextInt(12289);
            int segment = rnd.nextInt(100) < 3 ? 1 : 0;
            long arrival = processedPrefillTokens - rnd.nextLong(10_000_000L);
            SchedRequest r = SchedRequest.create("req-" + i, i, inputLen, 128, false, segment, arrival);
            r.admitWithCachedLen(rnd.nextInt(4) == 0 ? rnd.nextInt(inputLen) : 0);
            if (rnd.nextInt(10) == 0) {
                r.advancePrefill(r.remainingPrefillTokens());
            }
            ready.add(r);
        }
        queueStrategy.reorder(ready, processedPrefillTokens); // binds HRRN costs (steady state)
    }

    @Benchmark
    public List<SchedRequest> reorder() {
        return queueStrategy.reorder(ready, processedPrefillTokens);
    }
}
