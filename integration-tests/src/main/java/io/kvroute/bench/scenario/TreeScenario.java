package io.kvroute.bench.scenario;

import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.tree.TreeBenchmarkTable;
import java.util.List;
import java.util.Map;

/**
 * The {@code tree} scenario: the prefix-tree micro-benchmarks LightLLM ran on its compressed
 * tree ({@code lightllm/server/httpserver_for_pd_master/pd_selector/prompt_cache_tree.py}), run through
 * {@link TreeBenchmarkTable#run(boolean)} (JMH in process; {@code --quick} = no fork and tiny
 * iteration counts). One variant, no fleet; the result is a list of cases (median µs, LightLLM's
 * figure, speedup). Registered through {@code META-INF/services/io.kvroute.bench.Scenario}.
 */
public final class TreeScenario implements Scenario {

    /** JMH's lock file is shared by every JMH run on the machine; other engineers' runs must not block us. */
    private static final String JMH_IGNORE_LOCK = "jmh.ignoreLock";

    /**
     * Without {@code -Djdk.attach.allowAttachSelf=true} (a JVM flag, too late to set here) JOL cannot
     * attach and fails "Cannot get the field offset" unless told to use its magic field offsets; read
     * when JOL initializes, so setting it before the first JOL call works.
     */
    private static final String JOL_MAGIC_FIELD_OFFSET = "jol.magicFieldOffset";

    @Override
    public String name() {
        return "tree";
    }

    @Override
    public List<String> variants() {
        return List.of("prefix-index");
    }

    @Override
    public boolean hasClasses() {
        return false;
    }

    @Override
    public String timeModel(boolean quick) {
        return quick ? "JMH, no fork, 1 x 100 ms warm-up, 1 x 150 ms measurement (smoke only, not representative)"
                : "JMH -f 1 -wi 3 -w 1s -i 5 -r 1s, sample time, median per call";
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "LightLLM's prefix-tree cases (select, path, dense, branches, chat, token keys at 1/2/4 threads); "
                + "see docs/benchmarks-tree.md.";
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) {
        for (String property : List.of(JMH_IGNORE_LOCK, JOL_MAGIC_FIELD_OFFSET)) {
            if (System.getProperty(property) == null) {
                System.setProperty(property, "true");
            }
        }
        long start = System.nanoTime();
        List<VariantResult.CaseResult> cases = TreeBenchmarkTable.run(ctx.quick()).stream()
                .map(c -> new VariantResult.CaseResult(c.name(), c.medianMicros(),
                        c.seedMicros() == null ? Double.NaN : c.seedMicros(),
                        c.speedup() == null ? Double.NaN : c.speedup()))
                .toList();
        return new VariantResult(variant, List.of(), System.nanoTime() - start, Map.of(), null, cases);
    }
}
