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

    private String prompt;

    @Setup(Level.Trial)
    public void setUp() {
        prompt = PrefixBenchData.asciiText(1, promptChars);
    }

    @Benchmark
    public int[] sampled() {
        return KeyBuilder.sampled(prompt, PrefixBenchData.STRIDE);
    }
}
