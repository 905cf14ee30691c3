package io.kvroute.bench.jmh;

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
import org.openjdk.jmh.annotations.TearDown;

/**
 * LightLLM prefix-tree case 1: full select (sample, match, decide, insert) over 4 fake prefill workers,
 * stride 512, ASCII prompts. Cases: the owner is idle; every worker is busy; the owner is
 * overloaded and the request is reassigned; a miss (the tree is rebuilt after every invocation,
 * untimed, so every call stays a miss).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class PrefixSelectBench {
    static final String[] WORKERS = {"w0", "w1", "w2", "w3"};

    @Param({"4096", "65536", "524288", "1536000"})
    public int promptChars;

    @Param({"idle", "allBusy", "hitReassigned", "miss"})
    public String scenario;

    private String prompt;
    private io.kvroute.router.prefix.PrefixKey key;
    private String[] otherPrompts;
    private PrefixFakeSelector selector;

    @Setup(Level.Trial)
    public void setUp() {
        prompt = PrefixBenchData.asciiText(1, promptChars);
        key = io.kvroute.router.prefix.KeyBuilder.sampledKey(prompt, PrefixBenchData.STRIDE);
        String halfShared = scenario.equals("miss") // a miss shares nothing with the tree
                ? PrefixBenchData.asciiText(5, promptChars)
                : prompt.substring(0, promptChars / 2) + PrefixBenchData.asciiText(2, promptChars - promptChars / 2);
        otherPrompts = new String[] {
            halfShared,
            PrefixBenchData.asciiText(3, promptChars),
            PrefixBenchData.asciiText(4, promptChars),
        };
        build();
    }

    /** Tree: w0 holds the prompt (not in the miss case), w1 its first half, w2/w3 other prompts. */
    private void build() {
        PrefixIndex index = PrefixBenchData.newIndex(PrefixIndexConfig.defaults());
        int[] loads;
        switch (scenario) {
            case "idle" -> loads = new int[] {0, 5, 7, 9};
            case "allBusy" -> loads = new int[] {30, 25, 20, 22};
            case "hitReassigned" -> loads = new int[] {40, 1, 2, 3};
            case "miss" -> loads = new int[] {1, 2, 3, 4};
            default -> throw new IllegalArgumentException("scenario " + scenario);
        }
        PrefixFakeSelector builder = new PrefixFakeSelector(index, WORKERS, new int[] {0, 99, 99, 99});
        if (!scenario.equals("miss")) {
            builder.select(prompt); // w0 is the only idle worker while building
        }
        for (int i = 0; i < otherPrompts.length; i++) {
            int[] only = {99, 99, 99, 99};
            only[i + 1] = 0;
            new PrefixFakeSelector(index, WORKERS, only).select(otherPrompts[i]);
        }
        selector = new PrefixFakeSelector(index, WORKERS, loads);
    }

    @TearDown(Level.Invocation)
    public void resetMiss() {
        if (scenario.equals("miss")) {
            build();
        }
    }

    @Benchmark
    public PrefixFakeSelector.Decision select() {
        return selector.select(prompt);
    }

    /** Without key building: the key is sampled once in setup (isolates tree + decision). */
    @Benchmark
    public PrefixFakeSelector.Decision selectPrebuiltKey() {
        return selector.select(key, promptChars);
    }
}
