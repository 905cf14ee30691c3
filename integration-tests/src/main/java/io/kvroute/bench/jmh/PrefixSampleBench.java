package io.kvroute.bench.jmh;

import io.kvroute.router.prefix.KeyBuilder;
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

/** Key building alone (stride 512, ASCII), to attribute the full-select time. */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class PrefixSampleBench {
    @Param({"524288", "1536000"})
    public int promptChars;

    private static final int ODD_STRIDE = 509;

    private String prompt;
    private String oddStridePrompt;

    @Setup(Level.Trial)
    public void setUp() {
        prompt = PrefixBenchData.asciiText(1, promptChars);
        oddStridePrompt = prompt.substring(0, (int) ((long) promptChars * ODD_STRIDE / PrefixBenchData.STRIDE));
    }

    @Benchmark
    public int[] sampled() {
        return KeyBuilder.sampled(prompt, PrefixBenchData.STRIDE);
    }

    /** Int and byte forms in one loop (what the select benchmarks now use). */
    @Benchmark
    public io.kvroute.router.prefix.PrefixKey sampledKey() {
        return KeyBuilder.sampledKey(prompt, PrefixBenchData.STRIDE);
    }

    /**
     * The same loop at stride 509 over a text sized for the same number of samples: how much of
     * {@link #sampledKey} is the memory system rather than the loop. Samples 512 bytes apart fall
     * into one eighth of the L1/L2 cache sets (the set index comes from address bits 6-16), so
     * 3,000 of them do not stay cached; 509 bytes apart they spread over all sets.
     */
    @Benchmark
    public io.kvroute.router.prefix.PrefixKey sampledKeyOddStride() {
        return KeyBuilder.sampledKey(oddStridePrompt, ODD_STRIDE);
    }
}
