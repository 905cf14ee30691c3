package io.kvroute.bench.jmh;

import io.kvroute.router.prefix.PrefixIndex;
import io.kvroute.router.prefix.PrefixIndexConfig;
import io.kvroute.router.prefix.PrefixMatch;
import java.util.Arrays;
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
 * LightLLM prefix-tree case 4: a 256-turn append-only chat adding 4 samples per turn (ending at 524,288
 * chars = 1,024 samples); one call = all 256 turns of match + insert on a fresh index. The final
 * tree must be one edge ({@link #edgesAfterChat()}).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class PrefixChatBench {
    public static final int TURNS = 256;
    public static final int SAMPLES_PER_TURN = 4;

    private int[][] turns;

    @Setup(Level.Trial)
    public void setUp() {
        turns = turnKeys();
    }

    static int[][] turnKeys() {
        int[] full = PrefixBenchData.asciiKey(31, TURNS * SAMPLES_PER_TURN);
        int[][] out = new int[TURNS][];
        for (int t = 0; t < TURNS; t++) {
            out[t] = Arrays.copyOf(full, (t + 1) * SAMPLES_PER_TURN);
        }
        return out;
    }

    static long runChat(int[][] turns) {
        PrefixIndex index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
        long matched = 0;
        for (int[] key : turns) {
            PrefixMatch match = index.match(key);
            matched += match.matchedLength("w0");
            index.insertMatched(match, "w0");
        }
        return matched + index.stats().nodes();
    }

    /** Node count after the full chat (every node is one edge). */
    public static long edgesAfterChat() {
        PrefixIndex index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
        for (int[] key : turnKeys()) {
            index.insertMatched(index.match(key), "w0");
        }
        return index.stats().nodes();
    }

    @Benchmark
    public long chat256Turns() {
        return runChat(turns);
    }
}
