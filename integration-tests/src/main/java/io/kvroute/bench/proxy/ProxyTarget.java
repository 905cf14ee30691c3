package io.kvroute.bench.proxy;

import io.kvroute.bench.stats.LatencyStats;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.plugin.RouterMain;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Starting and measuring the things the proxy benchmarks compare: the bare upstream, an nginx reverse
 * proxy, and kvroute with a given policy, measured side by side in interleaved rounds (c=32 throughput and
 * latency, then the c=1 p50, per round).
 */
final class ProxyTarget {

    static final String MODEL = "m";
    static final String PATH = "/v1/chat/completions";
    /** The row name of {@link JettyReferenceProxy}. */
    static final String JETTY_REFERENCE = "jetty ProxyHandler";
    /**
     * Warm-up before each full-mode measurement, the same for every target. A fresh JVM needs several
     * seconds of this load before C2 has compiled the relay path: with 2 s the first JVM target measured
     * 3x below its own warm rate (the fleet-scale table's 4-worker rows were once read as a
     * per-destination cost; they were the cold JIT).
     */
    static final long FULL_WARMUP_MILLIS = 12_000;

    /**
     * Interleaved rounds per full run. Back-to-back runs of one unchanged target on this VM differed by up
     * to 30 % (and a target measured in one block can land in a noisy minute the next target misses), so
     * every target is measured in each of several short rounds, the order rotated per round, and reported
     * as its median round with the min-max spread beside it.
     */
    static final int FULL_ROUNDS = 5;
    static final long ROUND_C32_MILLIS = 3000;
    static final long ROUND_C1_MILLIS = 2000;

    /** A started thing to measure: its row name and where requests go. */
    record Target(String name, List<String> urls) {}

    /**
     * One target's figures: medians over the rounds (req/s, p50 and p99 at c=32, p50 at c=1), every request
     * served or failed (warm-up included), and the slowest and fastest round's req/s.
     */
    record Row(String target, double rpsC32, double p50C32Micros, double p99C32Micros, double p50C1Micros, long served,
            long failed, double rpsMin, double rpsMax) {}

    private ProxyTarget() {}

    /**
     * Warms every target once ({@link #FULL_WARMUP_MILLIS} at c=32), then runs {@link #FULL_ROUNDS} rounds
     * in which each target gets c=32 for {@link #ROUND_C32_MILLIS} (after 1 s unmeasured) and c=1 for
     * {@link #ROUND_C1_MILLIS}; round r starts at target r, so no target always follows the same one.
     * Quick mode: 0.5 s warm-up and one short round (smoke only).
     */
    static List<Row> measureInterleaved(List<Target> targets, boolean quick) throws Exception {
        return measureInterleaved(targets, quick, null);
    }

    /** As above, each request carrying the next of {@code keys}' API keys in turn (none when null). */
    static List<Row> measureInterleaved(List<Target> targets, boolean quick, ApiKeys keys) throws Exception {
        byte[] body = ClosedLoopLoad.chatBody(MODEL);
        int n = targets.size();
        int rounds = quick ? 1 : FULL_ROUNDS;
        long[] served = new long[n];
        long[] failed = new long[n];
        List<List<ClosedLoopLoad.Result>> c32 = new ArrayList<>();
        List<List<ClosedLoopLoad.Result>> c1 = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ClosedLoopLoad.Result warm = load(targets.get(i), body, keys, 32, 0, quick ? 500 : FULL_WARMUP_MILLIS);
            served[i] += warm.served();
            failed[i] += warm.failed();
            c32.add(new ArrayList<>());
            c1.add(new ArrayList<>());
        }
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < n; k++) {
                int i = (round + k) % n;
                ClosedLoopLoad.Result busy = load(targets.get(i), body, keys, 32, quick ? 0 : 1000,
                        quick ? 1000 : ROUND_C32_MILLIS);
                ClosedLoopLoad.Result idle = load(targets.get(i), body, keys, 1, quick ? 100 : 0, quick ? 500 : ROUND_C1_MILLIS);
                c32.get(i).add(busy);
                c1.get(i).add(idle);
                served[i] += busy.served() + idle.served();
                failed[i] += busy.failed() + idle.failed();
            }
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<ClosedLoopLoad.Result> busy = c32.get(i);
            LatencyStats rps = LatencyStats.of(busy.stream().mapToDouble(ClosedLoopLoad.Result::requestsPerSec).toArray());
            rows.add(new Row(targets.get(i).name(), rps.p50(),
                    LatencyStats.of(busy.stream().mapToDouble(ClosedLoopLoad.Result::p50Micros).toArray()).p50(),
                    LatencyStats.of(busy.stream().mapToDouble(ClosedLoopLoad.Result::p99Micros).toArray()).p50(),
                    LatencyStats.of(c1.get(i).stream().mapToDouble(ClosedLoopLoad.Result::p50Micros).toArray()).p50(),
                    served[i], failed[i], rps.percentile(0), rps.max()));
        }
        return rows;
    }

    /** Closes what a scenario started, last first; the first failure is thrown after all were tried. */
    static void closeAll(List<AutoCloseable> started) throws Exception {
        Exception first = null;
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** One closed-loop load on {@code target}: wrk on its first URL when installed, else the Java generator. */
    private static ClosedLoopLoad.Result load(Target target, byte[] body, ApiKeys keys, int connections, long warmMillis,
                                              long measureMillis) throws Exception {
        Optional<Path> wrk = ExternalTools.find("wrk");
        if (wrk.isPresent() && target.urls().size() == 1) {
            return ExternalTools.wrk(wrk.get(), target.urls().get(0), body, keys, connections, warmMillis, measureMillis);
        }
        return ClosedLoopLoad.run(target.urls(), body, keys, connections, warmMillis, measureMillis);
    }

    /** kvroute in process on an ephemeral port; {@code cacheAware} also loads the bundled Qwen3 tokenizer. */
    static RouterMain.RunningRouter router(List<String> workerUrls, boolean cacheAware, String... extraArgs)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0",
                "--worker-urls", String.join(",", workerUrls), "--model-ids", MODEL,
                "--policy", cacheAware ? "cache_aware" : "round_robin",
                "--health-check-interval-secs", "30"));
        if (cacheAware) {
            args.addAll(List.of("--tokenizer-path", MODEL + "=" + BundledTokenizer.qwen3()));
        }
        args.addAll(List.of(extraArgs));
        return RouterMain.start(args.toArray(String[]::new));
    }

    /** Where the generator sends requests: the first URL for wrk, all of them for the Java generator. */
    static String which() {
        return ExternalTools.find("wrk").isPresent() ? "wrk -t1 (installed)" : "the Java closed-loop generator (wrk not installed)";
    }

    static String table(List<Row> rows, String reference) {
        Row ref = rows.stream().filter(r -> r.target().equals(reference)).findFirst().orElse(rows.get(0));
        Row jetty = rows.stream().filter(r -> r.target().equals(JETTY_REFERENCE)).findFirst().orElse(null);
        StringBuilder out = new StringBuilder("| target | req/s c=32 | × " + ref.target() + (jetty == null ? "" : " | × " + JETTY_REFERENCE)
                + " | req/s min-max | p50 c=32 µs | p99 c=32 µs | p50 c=1 µs | added p50 c=1 µs | served | failed |\n"
                + "|---|---:|---:" + (jetty == null ? "" : "|---:") + "|---:|---:|---:|---:|---:|---:|---:|\n");
        Row direct = rows.get(0);
        for (Row r : rows) {
            out.append(String.format(java.util.Locale.ROOT, "| %s | %.0f | %.2f%s | %.0f-%.0f | %.0f | %.0f | %.0f | %.0f | %d | %d |%n",
                    r.target(), r.rpsC32(), r.rpsC32() / ref.rpsC32(),
                    jetty == null ? "" : String.format(java.util.Locale.ROOT, " | %.2f", r.rpsC32() / jetty.rpsC32()),
                    r.rpsMin(), r.rpsMax(), r.p50C32Micros(), r.p99C32Micros(), r.p50C1Micros(),
                    r.p50C1Micros() - direct.p50C1Micros(), r.served(), r.failed()));
        }
        return out.toString();
    }

}
