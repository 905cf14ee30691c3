package io.kvroute.bench.proxy;

import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.client.OpenLoopClient;
import io.kvroute.bench.client.RequestRecord;
import io.kvroute.bench.client.ScheduledRequest;
import io.kvroute.bench.stats.LatencyStats;
import io.kvroute.router.plugin.RouterMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code qos-overhead}: what the tenants and QoS machinery costs when nobody contends. Two routers on
 * the same upstream, side by side in one run: {@code cache_aware} with the Qwen3 tokenizer and no
 * tenants, and the same router with a {@value #TENANTS}-tenant file ({@code --tenants-file}: every key
 * hashed, rate limits far above what a tenant sends, the router-side queue on with a capacity the load
 * never reaches). Every request carries the next of the {@value #TENANTS} API keys, so each one is
 * looked up, classed, rate-limited, admitted, charged and settled; the plain router ignores the header.
 *
 * <p>Two measurements, both interleaved so neither router always runs in the quieter minute:
 * <ol>
 *   <li>closed loop at c=32 ({@link ProxyTarget#measureInterleaved}): the throughput cost;</li>
 *   <li>open loop at {@value #OPEN_LOOP_RATE} requests/s: the latency cost, p50 and p99 from send to the
 *       whole reply, medians over rounds. The upstream is the same for both, so the difference is router
 *       time.</li>
 * </ol>
 */
public final class QosOverheadScenario implements Scenario {

    static final int TENANTS = 10_000;
    static final int OPEN_LOOP_RATE = 2_000;
    static final String PLAIN = "kvroute cache_aware+tokenizer";
    static final String QOS = "kvroute cache_aware+tokenizer + QoS (10,000 tenants)";
    private static final ApiKeys KEYS = new ApiKeys("qos-overhead-", TENANTS);
    private static final int FULL_OPEN_ROUNDS = 5;
    private static final long FULL_OPEN_ROUND_MILLIS = 8_000;
    /** The first second of each open-loop round is not counted (connections and the rate settle). */
    private static final long OPEN_SETTLE_MILLIS = 1_000;

    @Override
    public String name() {
        return "qos-overhead";
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
        return quick ? "real time, smoke only: 0.5 s warm-up, 1 s closed loop and 1 s open loop at 200 req/s per router"
                : "real time: the closed loop as proxy-overhead (" + ProxyTarget.FULL_WARMUP_MILLIS / 1000 + " s warm-up per target, "
                        + ProxyTarget.FULL_ROUNDS + " interleaved rounds), then " + FULL_OPEN_ROUNDS + " interleaved open-loop rounds of "
                        + FULL_OPEN_ROUND_MILLIS / 1000 + " s at " + OPEN_LOOP_RATE + " req/s per router (first "
                        + OPEN_SETTLE_MILLIS / 1000 + " s not counted); load from " + ProxyTarget.which();
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "a short non-streaming chat per request, each with the next of " + TENANTS + " tenants' API keys; targets: "
                + "direct, kvroute cache_aware + tokenizer without tenants, the same with the tenants file and QoS on.";
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        long startedNanos = System.nanoTime();
        Files.createDirectories(ctx.outDir());
        Path tenantsFile = ctx.outDir().resolve("qos-overhead-tenants.yaml");
        Files.writeString(tenantsFile, tenantsYaml());
        List<AutoCloseable> started = new ArrayList<>();
        List<ProxyTarget.Row> closed;
        List<OpenRow> open;
        try (FixedReplyUpstream upstream = new FixedReplyUpstream("0.0.0.0")) {
            List<String> workers = new ArrayList<>();
            for (int i = 1; i <= 4; i++) {
                workers.add("http://127.0.0." + i + ":" + upstream.port());
            }
            RouterMain.RunningRouter plain = ProxyTarget.router(workers, true);
            started.add(plain);
            RouterMain.RunningRouter qos = ProxyTarget.router(workers, true, "--tenants-file", tenantsFile.toString(),
                    "--qos-worker-capacity-tokens", "1000000");
            started.add(qos);
            List<ProxyTarget.Target> targets = List.of(
                    new ProxyTarget.Target("direct", List.of(workers.get(0) + ProxyTarget.PATH)),
                    new ProxyTarget.Target(PLAIN, List.of(plain.baseUrl() + ProxyTarget.PATH)),
                    new ProxyTarget.Target(QOS, List.of(qos.baseUrl() + ProxyTarget.PATH)));
            closed = ProxyTarget.measureInterleaved(targets, ctx.quick(), KEYS);
            open = openLoop(List.of(plain.baseUrl(), qos.baseUrl()), ctx.quick());
        } finally {
            ProxyTarget.closeAll(started);
        }
        String table = ProxyTarget.table(closed, "direct") + "\n" + openTable(open) + "\n" + costLine(closed, open, ctx.quick() ? 200 : OPEN_LOOP_RATE);
        System.out.println();
        System.out.println("qos-overhead (one run, same box; closed-loop load from " + ProxyTarget.which() + ")");
        System.out.print(table);
        Files.writeString(ctx.outDir().resolve("qos-overhead.md"), table);
        List<VariantResult.CaseResult> cases = new ArrayList<>(ProxyOverheadScenario.cases(closed, "direct"));
        for (OpenRow r : open) {
            cases.add(new VariantResult.CaseResult(r.target() + " open p99", r.p99Micros(), open.get(0).p99Micros(),
                    open.get(0).p99Micros() / r.p99Micros()));
        }
        return new VariantResult(variant, List.of(), System.nanoTime() - startedNanos, Map.of(), null, cases);
    }

    /** The tenants file: one tenant per key, by digest, with limits far above its share of the load. */
    static String tenantsYaml() {
        StringBuilder y = new StringBuilder("# generated by the qos-overhead benchmark\ntenants:\n");
        for (int i = 0; i < TENANTS; i++) {
            y.append("  - name: t").append(i).append('\n')
                    .append("    api_keys_sha256: [").append(KEYS.sha256(i)).append("]\n")
                    .append("    requests_per_minute: 100000\n")
                    .append("    tokens_per_minute: 100000000\n");
        }
        return y.toString();
    }

    /**
     * One router's open-loop figures: medians over the rounds of each round's p50 and p99 (µs, send to the
     * whole reply), the slowest round's p99, the worst send lateness, and every request served or failed.
     */
    record OpenRow(String target, double p50Micros, double p99Micros, double p99MaxMicros, double latenessP99Micros,
            long served, long failed) {}

    private static List<OpenRow> openLoop(List<String> baseUrls, boolean quick) throws Exception {
        int rate = quick ? 200 : OPEN_LOOP_RATE;
        long roundMillis = quick ? 1_000 : FULL_OPEN_ROUND_MILLIS;
        long settleMillis = quick ? 0 : OPEN_SETTLE_MILLIS;
        int rounds = quick ? 1 : FULL_OPEN_ROUNDS;
        int n = baseUrls.size();
        List<List<double[]>> perRound = new ArrayList<>();
        long[] served = new long[n];
        long[] failed = new long[n];
        for (int i = 0; i < n; i++) {
            perRound.add(new ArrayList<>());
        }
        OpenLoopClient.Options options = new OpenLoopClient.Options(Duration.ofSeconds(30),
                Duration.ofMillis(roundMillis + 60_000), 256);
        long keyOffset = 0;
        try (OpenLoopClient client = new OpenLoopClient(options)) {
            for (int round = 0; round < rounds; round++) {
                for (int k = 0; k < n; k++) {
                    int i = (round + k) % n;
                    List<ScheduledRequest> schedule = schedule(rate, roundMillis, keyOffset);
                    keyOffset += schedule.size();
                    List<RequestRecord> records = client.run(baseUrls.get(i), schedule, r -> { });
                    List<Double> e2e = new ArrayList<>();
                    List<Double> lateness = new ArrayList<>();
                    for (RequestRecord r : records) {
                        if (!r.ok()) {
                            failed[i]++;
                            continue;
                        }
                        served[i]++;
                        if (r.scheduledNanos() >= settleMillis * 1_000_000) {
                            e2e.add((r.endNanos() - r.sentNanos()) / 1e3);
                            lateness.add(r.latenessNanos() / 1e3);
                        }
                    }
                    LatencyStats s = LatencyStats.of(e2e);
                    perRound.get(i).add(new double[] {s.p50(), s.p99(), LatencyStats.of(lateness).p99()});
                }
            }
        }
        List<OpenRow> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<double[]> r = perRound.get(i);
            LatencyStats p99s = LatencyStats.of(r.stream().mapToDouble(x -> x[1]).toArray());
            rows.add(new OpenRow(i == 0 ? PLAIN : QOS, LatencyStats.of(r.stream().mapToDouble(x -> x[0]).toArray()).p50(),
                    p99s.p50(), p99s.max(), LatencyStats.of(r.stream().mapToDouble(x -> x[2]).toArray()).max(),
                    served[i], failed[i]));
        }
        return rows;
    }

    private static List<ScheduledRequest> schedule(int ratePerSec, long millis, long keyOffset) {
        byte[] body = ClosedLoopLoad.chatBody(ProxyTarget.MODEL);
        int count = (int) (ratePerSec * millis / 1000);
        long gapNanos = 1_000_000_000L / ratePerSec;
        List<ScheduledRequest> out = new ArrayList<>(count);
        for (int j = 0; j < count; j++) {
            out.add(new ScheduledRequest(j * gapNanos, ProxyTarget.PATH, body, "", "",
                    Map.of("Authorization", "Bearer " + KEYS.key(keyOffset + j))));
        }
        return out;
    }

    static String openTable(List<OpenRow> rows) {
        StringBuilder out = new StringBuilder("| target (open loop) | p50 µs | p99 µs | slowest round's p99 µs "
                + "| send lateness p99 µs (worst round) | served | failed |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (OpenRow r : rows) {
            out.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %.0f | %.0f | %d | %d |%n", r.target(), r.p50Micros(),
                    r.p99Micros(), r.p99MaxMicros(), r.latenessP99Micros(), r.served(), r.failed()));
        }
        return out.toString();
    }

    /** The two figures the QoS cost is judged by: throughput ratio (closed loop) and added p99 (open loop). */
    static String costLine(List<ProxyTarget.Row> closed, List<OpenRow> open, int openRate) {
        ProxyTarget.Row plain = closed.stream().filter(r -> r.target().equals(PLAIN)).findFirst().orElseThrow();
        ProxyTarget.Row qos = closed.stream().filter(r -> r.target().equals(QOS)).findFirst().orElseThrow();
        return String.format(Locale.ROOT, "QoS cost: throughput %.3fx the plain router's at c=32; p99 %+.0f µs and p50 %+.0f µs "
                        + "at %d req/s (open loop).%n", qos.rpsC32() / plain.rpsC32(), open.get(1).p99Micros() - open.get(0).p99Micros(),
                open.get(1).p50Micros() - open.get(0).p50Micros(), openRate);
    }
}
