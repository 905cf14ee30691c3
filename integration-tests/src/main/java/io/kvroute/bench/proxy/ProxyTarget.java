package io.kvroute.bench.proxy;

import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.plugin.RouterMain;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Starting and measuring the things the proxy benchmarks compare: the bare upstream, an nginx reverse
 * proxy, and kvroute with a given policy. One measurement = c=32 throughput/p50, then the c=1 p50.
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

    /** One target's figures from one run. */
    record Row(String target, double rpsC32, double p50C32Micros, double p99C32Micros, double p50C1Micros, long served,
            long failed) {}

    private ProxyTarget() {}

    /** Measures {@code urls} (rotated per request by the Java generator; wrk hits the first). */
    static Row measure(String name, List<String> urls, boolean quick) throws Exception {
        byte[] body = ClosedLoopLoad.chatBody(MODEL);
        long warm = quick ? 500 : FULL_WARMUP_MILLIS;
        long measure = quick ? 1000 : 5000;
        Optional<Path> wrk = ExternalTools.find("wrk");
        ClosedLoopLoad.Result c32;
        ClosedLoopLoad.Result c1;
        if (wrk.isPresent() && urls.size() == 1) {
            c32 = ExternalTools.wrk(wrk.get(), urls.get(0), body, 32, warm, measure);
            c1 = ExternalTools.wrk(wrk.get(), urls.get(0), body, 1, 0, measure);
        } else {
            c32 = ClosedLoopLoad.run(urls, body, 32, warm, measure);
            c1 = ClosedLoopLoad.run(urls, body, 1, quick ? 100 : 500, measure);
        }
        return new Row(name, c32.requestsPerSec(), c32.p50Micros(), c32.p99Micros(), c1.p50Micros(),
                c32.served() + c1.served(), c32.failed() + c1.failed());
    }

    /** kvroute in process on an ephemeral port; {@code cacheAware} also loads the bundled Qwen3 tokenizer. */
    static RouterMain.RunningRouter router(List<String> workerUrls, boolean cacheAware) throws Exception {
        List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0",
                "--worker-urls", String.join(",", workerUrls), "--model-ids", MODEL,
                "--policy", cacheAware ? "cache_aware" : "round_robin",
                "--health-check-interval-secs", "30"));
        if (cacheAware) {
            args.addAll(List.of("--tokenizer-path", MODEL + "=" + BundledTokenizer.qwen3()));
        }
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
                + " | p50 c=32 µs | p99 c=32 µs | p50 c=1 µs | added p50 c=1 µs | served | failed |\n"
                + "|---|---:|---:" + (jetty == null ? "" : "|---:") + "|---:|---:|---:|---:|---:|---:|\n");
        Row direct = rows.get(0);
        for (Row r : rows) {
            out.append(String.format(java.util.Locale.ROOT, "| %s | %.0f | %.2f%s | %.0f | %.0f | %.0f | %.0f | %d | %d |%n",
                    r.target(), r.rpsC32(), r.rpsC32() / ref.rpsC32(),
                    jetty == null ? "" : String.format(java.util.Locale.ROOT, " | %.2f", r.rpsC32() / jetty.rpsC32()),
                    r.p50C32Micros(), r.p99C32Micros(), r.p50C1Micros(),
                    r.p50C1Micros() - direct.p50C1Micros(), r.served(), r.failed()));
        }
        return out.toString();
    }

}
