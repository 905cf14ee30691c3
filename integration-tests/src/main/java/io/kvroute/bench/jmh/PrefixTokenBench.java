package io.kvroute.bench.jmh;

import io.kvroute.router.prefix.PrefixIndex;
import io.kvroute.router.prefix.PrefixIndexConfig;
import io.kvroute.router.prefix.PrefixMatch;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Token mode: 128k-token prompts, 64 workers; each prompt's first 30% is one of 4 shared system
 * prefixes, the rest its own. One call = match + insert to the best worker (or a rotating one on a
 * miss). Run with 1, 2 and 4 threads to measure lock contention.
 */
@BenchmarkMode({Mode.SampleTime, Mode.Throughput})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PrefixTokenBench {
    static final int TOKENS = 128 * 1_024;
    static final int WORKERS = 64;
    static final int PROMPTS = 64;
    static final int VOCAB = 151_000;

    @State(Scope.Benchmark)
    public static class Fleet {
        PrefixIndex index;
        int[][] prompts;
        String[] workers;

        @Setup(Level.Trial)
        public void setUp() {
            SplittableRandom rnd = new SplittableRandom(41);
            int shared = TOKENS * 3 / 10;
            int[][] systemPrefixes = new int[4][shared];
            for (int[] p : systemPrefixes) {
                for (int i = 0; i < shared; i++) {
                    p[i] = rnd.nextInt(VOCAB);
                }
            }
            prompts = new int[PROMPTS][TOKENS];
            for (int p = 0; p < PROMPTS; p++) {
                System.arraycopy(systemPrefixes[p % 4], 0, prompts[p], 0, shared);
                for (int i = shared; i < TOKENS; i++) {
                    prompts[p][i] = rnd.nextInt(VOCAB);
                }
            }
            workers = new String[WORKERS];
            for (int w = 0; w < WORKERS; w++) {
                workers[w] = "worker-" + w;
            }
            index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
            for (int p = 0; p < PROMPTS; p++) {
                index.insert(prompts[p], workers[p % WORKERS]);
            }
        }
    }

    @State(Scope.Thread)
    public static class Cursor {
        int next;

        @Setup(Level.Trial)
        public void setUp() {
            next = (int) (Thread.currentThread().getId() % PROMPTS);
        }
    }

    @Benchmark
    public PrefixMatch matchThenInsert(Fleet fleet, Cursor cursor) {
        int p = cursor.next;
        cursor.next = (p + 1) % PROMPTS;
        int[] key = fleet.prompts[p];
        PrefixMatch match = fleet.index.match(key);
        String worker = match.bestWorker();
        if (worker == null) {
            worker = fleet.workers[p % WORKERS];
        }
        fleet.index.insertMatched(match, worker);
        return match;
    }
}
