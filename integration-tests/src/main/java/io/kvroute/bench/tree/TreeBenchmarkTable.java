package io.kvroute.bench.tree;

import io.kvroute.bench.jmh.PrefixBranchesBench;
import io.kvroute.bench.jmh.PrefixChatBench;
import io.kvroute.router.prefix.PrefixIndex;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jol.info.GraphLayout;

/**
 * The prefix-tree benchmark table of the harness's {@code tree} scenario: runs the {@code Prefix*}
 * JMH suite programmatically and pairs each median with LightLLM's figure for its compressed tree
 * ({@code lightllm/server/httpserver_for_pd_master/pd_selector/prompt_cache_tree.py};
 * null where LightLLM gave only ratios against upstream). Two rows are not times: the retained
 * bytes of the 64-branch tree (JOL) and the edge count after the 256-turn chat.
 */
public final class TreeBenchmarkTable {
    /** One row; {@code speedup = seedMicros / medianMicros} (null without a seed figure). */
    public record Case(String name, double medianMicros, Double seedMicros, Double speedup) {}

    /** The figures LightLLM's compressed prefix tree reported for these cases ("本次实现"), µs; memory in bytes. */
    private static final Map<String, Double> SEED = new LinkedHashMap<>();

    static {
        SEED.put("select/1536000/idle", 9.36);
        SEED.put("select/1536000/allBusy", 11.91);
        SEED.put("path/newInsert", 3.382);
        SEED.put("path/reInsert", 3.139);
        SEED.put("path/fullMatch", 2.353);
        SEED.put("path/insertWithEviction", 6.222);
        SEED.put("dense/65536", 13.06);
        SEED.put("dense/524288", 78.56);
        SEED.put("dense/1536000", 233.15);
        SEED.put("chat/chat256Turns", 2_303.0);
        SEED.put("branches/retainedBytes (bytes, not µs)", 160_049.0);
    }

    private TreeBenchmarkTable() {}

    public static List<Case> run(boolean quick) {
        try {
            List<Case> cases = new ArrayList<>();
            cases.addAll(runJmh("io\\.kvroute\\.bench\\.jmh\\.Prefix(Select|Dense|Path|Branches|Chat|Sample)Bench\\.", 1, quick));
            for (int threads : new int[] {1, 2, 4}) {
                for (Case c : runJmh("io\\.kvroute\\.bench\\.jmh\\.PrefixTokenBench\\.", threads, quick)) {
                    cases.add(new Case(c.name() + "/threads=" + threads, c.medianMicros(), null, null));
                }
            }
            PrefixIndex branches = PrefixBranchesBench.buildTree();
            cases.add(withSeed("branches/retainedBytes (bytes, not µs)",
                    GraphLayout.parseInstance(branches).totalSize()));
            cases.add(withSeed("chat/edgesAtEnd (count, not µs)", PrefixChatBench.edgesAfterChat()));
            return cases;
        } catch (RunnerException e) {
            throw new IllegalStateException("JMH run failed", e);
        }
    }

    private static List<Case> runJmh(String include, int threads, boolean quick) throws RunnerException {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(include)
                .threads(threads)
                .timeUnit(TimeUnit.MICROSECONDS)
                .shouldFailOnError(true);
        if (quick) {
            options.forks(0).warmupIterations(1).warmupTime(TimeValue.milliseconds(100))
                    .measurementIterations(1).measurementTime(TimeValue.milliseconds(150));
        } else {
            options.forks(1).warmupIterations(3).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(5).measurementTime(TimeValue.seconds(1))
                    .jvmArgsAppend("-Xmx2g");
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        List<Case> out = new ArrayList<>();
        for (RunResult r : results) {
            String method = r.getParams().getBenchmark();
            String cls = method.substring(0, method.lastIndexOf('.'));
            String group = cls.substring(cls.lastIndexOf('.') + 1).replace("Prefix", "").replace("Bench", "")
                    .toLowerCase(Locale.ROOT);
            String methodName = method.substring(method.lastIndexOf('.') + 1);
            String name = group;
            if (group.equals("select") || group.equals("dense") || group.equals("sample")) {
                if (methodName.equals("selectPrebuiltKey")) {
                    name += "-prebuiltKey";
                } else if (methodName.equals("sampledKey")) {
                    name += "-sampledKey";
                } else if (methodName.equals("sampledKeyOddStride")) {
                    name += "-sampledKey-stride509";
                }
                name += "/" + r.getParams().getParam("promptChars");
                if (group.equals("select")) {
                    name += "/" + r.getParams().getParam("scenario");
                }
            } else {
                name += "/" + method.substring(method.lastIndexOf('.') + 1);
            }
            if (r.getParams().getMode() == Mode.Throughput) { // ops/µs -> a row in ops/s
                out.add(new Case(name + "/throughput (ops/s, not µs)",
                        r.getPrimaryResult().getScore() * 1e6, null, null));
                continue;
            }
            double median = r.getPrimaryResult().getStatistics().getPercentile(50);
            out.add(withSeed(name, median));
        }
        return out;
    }

    private static Case withSeed(String name, double value) {
        Double seed = SEED.get(name);
        return new Case(name, value, seed, seed == null ? null : seed / value);
    }

    /** Prints the table as Markdown; {@code --quick} for tiny iteration counts. */
    public static void main(String[] args) {
        boolean quick = args.length > 0 && args[0].equals("--quick");
        List<Case> cases = run(quick);
        System.out.println("| case | median (µs) | LightLLM (µs) | speedup (LightLLM / ours) |");
        System.out.println("|---|---:|---:|---:|");
        for (Case c : cases) {
            System.out.printf(Locale.ROOT, "| %s | %.3f | %s | %s |%n", c.name(), c.medianMicros(),
                    c.seedMicros() == null ? "—" : String.format(Locale.ROOT, "%.3f", c.seedMicros()),
                    c.speedup() == null ? "—" : String.format(Locale.ROOT, "%.1f×", c.speedup()));
        }
    }
}
