package io.kvroute.bench.proxy;

import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.router.plugin.RouterMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code fleet-scale}: does the router's per-request cost grow with the fleet? One minimal
 * upstream answers as 4, 64, 256 and 1,024 workers (distinct 127.0.x.y addresses, one port); for each
 * size, in one run: an nginx reverse proxy over the same workers (when installed), kvroute
 * {@code round_robin} and kvroute {@code cache_aware} + tokenizer; throughput at 32 connections and the
 * unloaded p50. Target: at 1,024 workers, {@code cache_aware} keeps at least 0.8× its 4-worker throughput
 * and its unloaded p50 within 50 µs of the 4-worker figure.
 */
public final class FleetScaleScenario implements Scenario {

    static final List<Integer> SIZES = List.of(4, 64, 256, 1024);

    @Override
    public String name() {
        return "fleet-scale";
    }

    @Override
    public List<String> variants() {
        return List.of("side-by-side");
    }

    @Override
    public boolean hasClasses() {
        return false;
    }

    @Override
    public String timeModel(boolean quick) {
        return quick ? "real time, sizes 4 and 64 only, 0.5 s warm-up + 1 s per measurement (smoke only)"
                : "real time, every target up at once: " + ProxyTarget.FULL_WARMUP_MILLIS / 1000 + " s warm-up each, then "
                        + ProxyTarget.FULL_ROUNDS + " interleaved rounds of " + ProxyTarget.ROUND_C32_MILLIS / 1000
                        + " s at c=32 and " + ProxyTarget.ROUND_C1_MILLIS / 1000 + " s at c=1 per target (medians); load from "
                        + ProxyTarget.which();
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "a short non-streaming chat per request, closed loop; per fleet size: nginx (if installed), kvroute "
                + "round_robin, kvroute cache_aware + tokenizer. Cases: median = p50 µs at c=32, speedup = req/s "
                + "ratio to the same policy at 4 workers.";
    }

    /** The URL of worker {@code i} (0-based): 127.0.0.1 .. 127.0.0.250, 127.0.1.1 .., one port. */
    static String workerUrl(int i, int port) {
        return "http://127.0." + (i / 250) + "." + (i % 250 + 1) + ":" + port;
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        List<Integer> sizes = ctx.quick() ? SIZES.subList(0, 2) : SIZES;
        List<String[]> table = new ArrayList<>();
        List<VariantResult.CaseResult> cases = new ArrayList<>();
        Map<String, ProxyTarget.Row> atFour = new java.util.HashMap<>();
        long startedNanos = System.nanoTime();
        Optional<Path> nginx = ExternalTools.find("nginx");
        List<AutoCloseable> started = new ArrayList<>();
        try (FixedReplyUpstream upstream = new FixedReplyUpstream("0.0.0.0")) {
            // every size's targets up at once, then measured side by side in interleaved rounds
            List<ProxyTarget.Target> targets = new ArrayList<>();
            List<Integer> sizeOf = new ArrayList<>();
            for (int size : sizes) {
                List<String> workers = new ArrayList<>();
                for (int i = 0; i < size; i++) {
                    workers.add(workerUrl(i, upstream.port()));
                }
                if (nginx.isPresent()) {
                    ExternalTools.NginxProxy proxy = new ExternalTools.NginxProxy(nginx.get(), ExternalTools.hostPorts(workers));
                    started.add(proxy);
                    targets.add(new ProxyTarget.Target("nginx", List.of(proxy.url(ProxyTarget.PATH))));
                    sizeOf.add(size);
                }
                for (boolean cacheAware : new boolean[] {false, true}) {
                    RouterMain.RunningRouter router = ProxyTarget.router(workers, cacheAware);
                    started.add(router);
                    targets.add(new ProxyTarget.Target(cacheAware ? "cache_aware+tokenizer" : "round_robin",
                            List.of(router.baseUrl() + ProxyTarget.PATH)));
                    sizeOf.add(size);
                }
            }
            List<ProxyTarget.Row> measured = ProxyTarget.measureInterleaved(targets, ctx.quick());
            Map<Integer, ProxyTarget.Row> refBySize = new java.util.HashMap<>();
            for (int i = 0; i < measured.size(); i++) {
                refBySize.putIfAbsent(sizeOf.get(i), measured.get(i));
            }
            for (int i = 0; i < measured.size(); i++) {
                ProxyTarget.Row r = measured.get(i);
                int size = sizeOf.get(i);
                ProxyTarget.Row ref = refBySize.get(size);
                atFour.putIfAbsent(r.target(), r);
                ProxyTarget.Row four = atFour.get(r.target());
                table.add(new String[] {String.valueOf(size), r.target(), fmt(r.rpsC32()), fmt(r.rpsMin()) + "-" + fmt(r.rpsMax()),
                        fmt2(r.rpsC32() / ref.rpsC32()), fmt2(r.rpsC32() / four.rpsC32()), fmt(r.p50C1Micros()),
                        fmt(r.p50C1Micros() - four.p50C1Micros()), String.valueOf(r.served()), String.valueOf(r.failed())});
                cases.add(new VariantResult.CaseResult(size + " workers " + r.target(), r.p50C32Micros(), Double.NaN,
                        r.rpsC32() / four.rpsC32()));
            }
        } finally {
            ProxyTarget.closeAll(started);
        }
        StringBuilder md = new StringBuilder("| workers | target | req/s c=32 | req/s min-max | × " + (nginx.isPresent() ? "nginx" : "first row")
                + " | × same at 4 | p50 c=1 µs | Δ p50 vs 4 µs | served | failed |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String[] row : table) {
            md.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        System.out.println();
        System.out.println("fleet-scale (one run, same box; load from " + ProxyTarget.which() + ")");
        System.out.print(md);
        Files.createDirectories(ctx.outDir());
        Files.writeString(ctx.outDir().resolve("fleet-scale.md"), md.toString());
        return new VariantResult(variant, List.of(), System.nanoTime() - startedNanos, Map.of(), null, cases);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.0f", v);
    }

    private static String fmt2(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
