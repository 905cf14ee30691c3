package io.kvroute.bench.proxy;

import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.router.plugin.RouterMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code proxy-overhead}: direct to a minimal upstream, through an nginx reverse proxy (when
 * nginx is installed), and through kvroute with {@code round_robin} and with {@code cache_aware} + the
 * Qwen3 tokenizer + {@code input_ids} forwarding, side by side in ONE run on the same box. Prints
 * throughput at 32 connections, p50/p99 there, the unloaded (1 connection) p50 and the ratios; the
 * reference for ratios is nginx when present, else direct. The upstream answers as 4 workers
 * (127.0.0.1-4, one port). Registered through {@code META-INF/services/io.kvroute.bench.Scenario}.
 */
public final class ProxyOverheadScenario implements Scenario {

    @Override
    public String name() {
        return "proxy-overhead";
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
        return quick ? "real time, 0.5 s warm-up + 1 s per measurement (smoke only)"
                : "real time, every target up at once: " + ProxyTarget.FULL_WARMUP_MILLIS / 1000 + " s warm-up each, then "
                        + ProxyTarget.FULL_ROUNDS + " interleaved rounds of " + ProxyTarget.ROUND_C32_MILLIS / 1000
                        + " s at c=32 and " + ProxyTarget.ROUND_C1_MILLIS / 1000 + " s at c=1 per target (medians); load from "
                        + ProxyTarget.which();
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "a short non-streaming chat per request, closed loop, keep-alive; targets: direct, nginx (if installed), "
                + "Jetty's ProxyHandler (the reference relay on kvroute's own stack), kvroute round_robin, kvroute cache_aware + tokenizer. Cases: median = p50 µs at that concurrency, "
                + "speedup = req/s ratio to the reference.";
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        List<ProxyTarget.Row> rows = new ArrayList<>();
        long startedNanos = System.nanoTime();
        List<AutoCloseable> started = new ArrayList<>();
        try (FixedReplyUpstream upstream = new FixedReplyUpstream("0.0.0.0")) {
            List<String> workers = new ArrayList<>();
            for (int i = 1; i <= 4; i++) {
                workers.add("http://127.0.0." + i + ":" + upstream.port());
            }
            // every target up at once, then measured side by side in interleaved rounds
            List<ProxyTarget.Target> targets = new ArrayList<>();
            targets.add(new ProxyTarget.Target("direct", List.of(workers.get(0) + ProxyTarget.PATH)));
            Optional<Path> nginx = ExternalTools.find("nginx");
            if (nginx.isPresent()) {
                ExternalTools.NginxProxy proxy = new ExternalTools.NginxProxy(nginx.get(), ExternalTools.hostPorts(workers));
                started.add(proxy);
                targets.add(new ProxyTarget.Target("nginx", List.of(proxy.url(ProxyTarget.PATH))));
            }
            JettyReferenceProxy reference = new JettyReferenceProxy(workers);
            started.add(reference);
            targets.add(new ProxyTarget.Target(ProxyTarget.JETTY_REFERENCE, List.of(reference.url(ProxyTarget.PATH))));
            for (boolean cacheAware : new boolean[] {false, true}) {
                RouterMain.RunningRouter router = ProxyTarget.router(workers, cacheAware);
                started.add(router);
                targets.add(new ProxyTarget.Target(cacheAware ? "kvroute cache_aware+tokenizer" : "kvroute round_robin",
                        List.of(router.baseUrl() + ProxyTarget.PATH)));
            }
            rows.addAll(ProxyTarget.measureInterleaved(targets, ctx.quick()));
        } finally {
            ProxyTarget.closeAll(started);
        }
        String reference = rows.stream().anyMatch(r -> r.target().equals("nginx")) ? "nginx" : "direct";
        String table = ProxyTarget.table(rows, reference);
        System.out.println();
        System.out.println("proxy-overhead (one run, same box; load from " + ProxyTarget.which() + ")");
        System.out.print(table);
        Files.createDirectories(ctx.outDir());
        Files.writeString(ctx.outDir().resolve("proxy-overhead.md"), table);
        return new VariantResult(variant, List.of(), System.nanoTime() - startedNanos, Map.of(), null, cases(rows, reference));
    }

    static List<VariantResult.CaseResult> cases(List<ProxyTarget.Row> rows, String reference) {
        ProxyTarget.Row ref = rows.stream().filter(r -> r.target().equals(reference)).findFirst().orElse(rows.get(0));
        List<VariantResult.CaseResult> out = new ArrayList<>();
        for (ProxyTarget.Row r : rows) {
            out.add(new VariantResult.CaseResult(r.target() + " c=32", r.p50C32Micros(), ref.p50C32Micros(),
                    r.rpsC32() / ref.rpsC32()));
            out.add(new VariantResult.CaseResult(r.target() + " c=1", r.p50C1Micros(), ref.p50C1Micros(), Double.NaN));
        }
        return out;
    }
}
