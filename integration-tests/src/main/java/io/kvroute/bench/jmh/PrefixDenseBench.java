package io.kvroute.bench.jmh;

import io.kvroute.router.prefix.KeyBuilder;
import io.kvroute.router.prefix.PrefixKey;
import io.kvroute.router.prefix.PrefixIndex;
import io.kvroute.router.prefix.PrefixIndexConfig;
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
 * LightLLM's prefix-tree branch-density table: a tree built through the public insert so that every sample of
 * the prompt branches (the compressed tree degenerates into single-element nodes), exactly one of
 * the 4 workers idle; full select of the prompt. The owner is busy, so the idle worker gets it.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class PrefixDenseBench {
    @Param({"65536", "524288", "1536000"})
    public int promptChars;

    private String prompt;
    private int[] key;
    private PrefixKey prefixKey;
    private PrefixFakeSelector selector;

    @Setup(Level.Trial)
    public void setUp() {
        prompt = PrefixBenchData.asciiText(11, promptChars);
        key = KeyBuilder.sampled(prompt, PrefixBenchData.STRIDE);
        prefixKey = KeyBuilder.sampledKey(prompt, PrefixBenchData.STRIDE);
        PrefixIndex index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
        for (int i = 0; i < key.length; i++) {
            index.insert(PrefixBenchData.divergeAt(key, i, i + 1), "w" + (1 + i % 2));
        }
        index.insert(key, "w0");
        if (index.stats().nodes() < 2L * key.length - 1) {
            throw new IllegalStateException("tree is not fully branched: " + index.stats());
        }
        selector = new PrefixFakeSelector(index, PrefixSelectBench.WORKERS, new int[] {30, 25, 20, 0});
    }

    @Benchmark
    public PrefixFakeSelector.Decision select() {
        return selector.select(prompt);
    }

    /** Without key building: the key is sampled once in setup (isolates tree + decision). */
    @Benchmark
    public PrefixFakeSelector.Decision selectPrebuiltKey() {
        return selector.select(prefixKey, promptChars);
    }
}
