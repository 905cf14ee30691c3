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
import org.openjdk.jmh.annotations.TearDown;

/**
 * LightLLM prefix-tree case 3: 64 random branches sharing their first 16 samples, each 1,024 deep (64,528
 * logical samples). New-branch insert (a 65th branch by a fresh worker, removed untimed after each
 * call), re-insert, full match, half-depth match (diverges at sample 512).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class PrefixBranchesBench {
    public static final int BRANCHES = 64;
    public static final int SHARED = 16;
    public static final int DEPTH = 1_024;

    private PrefixIndex index;
    private PrefixKey existing;
    private PrefixKey halfway;
    private PrefixKey fresh;

    /** The benchmark's tree, also used for the retained-memory figure. */
    public static PrefixIndex buildTree() {
        PrefixIndex index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
        for (int b = 0; b < BRANCHES; b++) {
            index.insert(branch(b), PrefixSelectBench.WORKERS[b % 4]);
        }
        return index;
    }

    static int[] branch(int b) {
        int[] key = PrefixBenchData.asciiKey(100 + b, DEPTH);
        int[] shared = PrefixBenchData.asciiKey(99, SHARED);
        System.arraycopy(shared, 0, key, 0, SHARED);
        if (key[SHARED] == shared[0]) { // keep every branch distinct right after the shared part
            key[SHARED]++;
        }
        return key;
    }

    @Setup(Level.Trial)
    public void setUp() {
        index = buildTree();
        int[] existingInts = branch(7);
        existing = PrefixKey.of(existingInts);
        halfway = PrefixKey.of(PrefixBenchData.divergeAt(existingInts, DEPTH / 2, DEPTH));
        fresh = PrefixKey.of(branch(1_000));
    }

    @TearDown(Level.Invocation)
    public void dropFreshBranch() {
        index.removeWorker("fresh");
    }

    @Benchmark
    public PrefixIndex newBranchInsert() {
        index.insert(fresh, "fresh");
        return index;
    }

    @Benchmark
    public PrefixIndex reInsert() {
        index.insert(existing, "w3");
        return index;
    }

    @Benchmark
    public PrefixMatch fullMatch() {
        return index.match(existing);
    }

    @Benchmark
    public PrefixMatch halfDepthMatch() {
        return index.match(halfway);
    }
}
