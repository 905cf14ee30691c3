package io.kvroute.bench.jmh;

import io.kvroute.router.prefix.PrefixIndex;
import io.kvroute.router.prefix.PrefixIndexConfig;
import io.kvroute.router.prefix.PrefixKey;
import io.kvroute.router.prefix.PrefixMatch;
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
 * LightLLM prefix-tree case 2: one path of 524,288 chars (1,024 samples at stride 512). New insert (into
 * an empty index, rebuilt untimed before each call), re-insert, full match, and insert with
 * eviction (capacity 1,024: each insert of one path evicts the other path entirely).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PrefixPathBench {
    static final int SAMPLES = 1_024;

    @State(Scope.Benchmark)
    public static class Loaded {
        final int[] keyInts = PrefixBenchData.asciiKey(21, SAMPLES);
        final PrefixKey key = PrefixKey.of(keyInts);
        PrefixIndex index;

        @Setup(Level.Trial)
        public void setUp() {
            index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
            index.insert(key, "w0");
        }
    }

    @State(Scope.Benchmark)
    public static class Empty {
        final PrefixKey key = PrefixKey.of(PrefixBenchData.asciiKey(21, SAMPLES));
        PrefixIndex index;

        @Setup(Level.Invocation)
        public void setUp() {
            index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
        }
    }

    @State(Scope.Benchmark)
    public static class Evicting {
        final PrefixKey a = PrefixKey.of(PrefixBenchData.asciiKey(21, SAMPLES));
        final PrefixKey b = PrefixKey.of(PrefixBenchData.asciiKey(22, SAMPLES));
        PrefixIndex index;
        boolean insertA;

        @Setup(Level.Trial)
        public void setUp() {
            index = PrefixBenchData.newIndex(PrefixIndexConfig.withPerWorkerCapacity(SAMPLES));
            index.insert(b, "w0");
            insertA = true;
        }
    }

    @Benchmark
    public PrefixIndex newInsert(Empty s) {
        s.index.insert(s.key, "w0");
        return s.index;
    }

    @Benchmark
    public PrefixIndex reInsert(Loaded s) {
        s.index.insert(s.key, "w0");
        return s.index;
    }

    @Benchmark
    public PrefixMatch fullMatch(Loaded s) {
        return s.index.match(s.key);
    }

    /** fullMatch with the int[] key (no byte form): the scalar int-vs-byte compare. */
    @Benchmark
    public PrefixMatch fullMatchIntKey(Loaded s) {
        return s.index.match(s.keyInts);
    }

    @Benchmark
    public PrefixIndex insertWithEviction(Evicting s) {
        s.index.insert(s.insertA ? s.a : s.b, "w0");
        s.insertA = !s.insertA;
        return s.index;
    }
}
