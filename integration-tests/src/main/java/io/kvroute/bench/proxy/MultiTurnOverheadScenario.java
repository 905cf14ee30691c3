package io.kvroute.bench.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.bench.stats.LatencyStats;
import io.kvroute.bench.stats.PrometheusText;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * {@code multi-turn-overhead}: the router's own time on turn N of a long chat, end to end. A
 * kvroute {@code cache_aware} router with the bundled Qwen3 tokenizer in front of a fixed-reply upstream
 * plays one conversation turn by turn (each turn: the previous answer and a new ~200-token user message)
 * until the history passes the target size, then measures the next turns one request at a time. The
 * router's time per request is read from its own {@code kvroute_router_overhead_seconds} (ingress to the
 * upstream send: body read, parse, tokenization with the chat prefix cache, the {@code input_ids} body
 * rewrite, selection), as a delta of one request between two scrapes. The same measured bodies then go
 * to a second router with the prefix cache off ({@code --tokenizer-cache-bytes 0}). Target: at most 10 ms
 * at 100k tokens of history.
 */
public final class MultiTurnOverheadScenario implements Scenario {

    private static final ObjectMapper JSON = new ObjectMapper();
    static final String OVERHEAD = "kvroute_router_overhead_seconds";
    static final String TOKENIZE = "kvroute_router_overhead_tokenize_seconds";
    private static final String[] WORDS = ("the router tokenizes each request once at ingress and reuses ids for routing "
            + "def route ( req ) : return min ( workers , key = lambda w : w . queue_len ) 缓存 感知 路由 前缀 命中率 "
            + "numbers 12345 67 and symbols { } [ ] < > ! ? 😀 🚀 prefill decode cache kv block hash worker").split(" ");

    @Override
    public String name() {
        return "multi-turn-overhead";
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
        return "real time; one request at a time, each measured by the router's own overhead histogram";
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "one chat grown turn by turn to " + historyTarget(quick) + " tokens (Qwen3 count), then " + measuredTurns(quick)
                + " measured turns of ~" + TURN_TOKENS + "-token answer + ~" + TURN_TOKENS + "-token question; the same bodies "
                + "to a router with the chat prefix cache off. Quick: a shorter chat and fewer turns (smoke only).";
    }

    static final int TURN_TOKENS = 200;

    static int historyTarget(boolean quick) {
        return quick ? 6_000 : 100_000;
    }

    static int measuredTurns(boolean quick) {
        return quick ? 5 : 20;
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        long startedNanos = System.nanoTime();
        boolean quick = ctx.quick();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        SplittableRandom random = new SplittableRandom(ctx.seed());
        List<Measured> cached = new ArrayList<>();
        List<Measured> uncached = new ArrayList<>();
        List<byte[]> measuredBodies = new ArrayList<>();
        int history = 0; // tokens of the chat so far (Qwen3 count of every message's text)
        int historyAtStart = -1;
        int newTokensPerTurn = 0;
        try (FixedReplyUpstream upstream = new FixedReplyUpstream("127.0.0.1");
             TokenizerRegistry counting = TokenizerRegistry.load(Map.of(ProxyTarget.MODEL, BundledTokenizer.qwen3()), 0)) {
            ModelTokenizer tokenizer = counting.forModel(ProxyTarget.MODEL).orElseThrow();
            List<String> workers = List.of("http://127.0.0.1:" + upstream.port());
            ObjectNode chat = JSON.createObjectNode().put("model", ProxyTarget.MODEL).put("max_tokens", 8);
            ArrayNode messages = chat.putArray("messages");
            messages.addObject().put("role", "system").put("content", "You are a helpful assistant.");
            int turnsMeasured = 0;
            try (RouterMain.RunningRouter router = ProxyTarget.router(workers, true)) {
                while (turnsMeasured < measuredTurns(quick)) {
                    Text question = text(random, tokenizer, TURN_TOKENS);
                    messages.addObject().put("role", "user").put("content", question.text());
                    byte[] body = JSON.writeValueAsBytes(chat);
                    boolean measure = history >= historyTarget(quick);
                    if (measure) {
                        historyAtStart = historyAtStart < 0 ? history : historyAtStart;
                        cached.add(measure(http, router.baseUrl(), body));
                        measuredBodies.add(body);
                        turnsMeasured++;
                    } else {
                        post(http, router.baseUrl(), body);
                    }
                    Text answer = text(random, tokenizer, TURN_TOKENS);
                    messages.addObject().put("role", "assistant").put("content", answer.text());
                    newTokensPerTurn = question.tokens() + answer.tokens();
                    history += newTokensPerTurn;
                }
            }
            try (RouterMain.RunningRouter router = ProxyTarget.router(workers, true, "--tokenizer-cache-bytes", "0")) {
                for (byte[] body : measuredBodies.subList(0, Math.min(3, measuredBodies.size()))) {
                    post(http, router.baseUrl(), body); // unmeasured: the first requests of a fresh router
                }
                for (byte[] body : measuredBodies) {
                    uncached.add(measure(http, router.baseUrl(), body));
                }
            }
        }
        Summary on = Summary.of(cached);
        Summary off = Summary.of(uncached);
        String md = String.format(Locale.ROOT, "| router | history tokens | new tokens/turn | turns | router time p50 ms | max ms "
                + "| tokenize stage p50 ms |%n|---|---:|---:|---:|---:|---:|---:|%n"
                + "| chat prefix cache on (default) | %,d-%,d | ~%d | %d | %.2f | %.2f | %.2f |%n"
                + "| chat prefix cache off | %,d-%,d | ~%d | %d | %.2f | %.2f | %.2f |%n",
                historyAtStart, history, newTokensPerTurn, cached.size(), on.p50Ms, on.maxMs, on.tokenizeP50Ms,
                historyAtStart, history, newTokensPerTurn, uncached.size(), off.p50Ms, off.maxMs, off.tokenizeP50Ms);
        System.out.println();
        System.out.println("multi-turn-overhead (router time per request from its own overhead histogram)");
        System.out.print(md);
        Files.createDirectories(ctx.outDir());
        Files.writeString(ctx.outDir().resolve("multi-turn-overhead.md"), md);
        List<VariantResult.CaseResult> cases = List.of(
                new VariantResult.CaseResult("prefix cache on: router time", on.p50Ms * 1000, Double.NaN, off.p50Ms / on.p50Ms),
                new VariantResult.CaseResult("prefix cache off: router time", off.p50Ms * 1000, Double.NaN, 1));
        return new VariantResult(variant, List.of(), System.nanoTime() - startedNanos, Map.of(), null, cases);
    }

    /** One request's router time and tokenize stage, in seconds. */
    record Measured(double routerSeconds, double tokenizeSeconds) {}

    record Summary(double p50Ms, double maxMs, double tokenizeP50Ms) {
        static Summary of(List<Measured> turns) {
            LatencyStats router = LatencyStats.of(turns.stream().mapToDouble(Measured::routerSeconds).toArray());
            LatencyStats tokenize = LatencyStats.of(turns.stream().mapToDouble(Measured::tokenizeSeconds).toArray());
            return new Summary(router.p50() * 1000, router.max() * 1000, tokenize.p50() * 1000);
        }
    }

    /** Sends one request between two scrapes; the deltas of the overhead histograms are this request's. */
    private static Measured measure(HttpClient http, String baseUrl, byte[] body) throws Exception {
        double[] before = scrape(http, baseUrl);
        post(http, baseUrl, body);
        double[] after = scrape(http, baseUrl);
        if (after[1] - before[1] != 1) {
            throw new IllegalStateException("expected one request between scrapes, saw " + (after[1] - before[1]));
        }
        return new Measured(after[0] - before[0], after[2] - before[2]);
    }

    private static void post(HttpClient http, String baseUrl, byte[] body) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(baseUrl + ProxyTarget.PATH))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("router answered " + response.statusCode() + ": " + response.body());
        }
    }

    /** {overhead sum, overhead count, tokenize-stage sum over its cache labels} for chat completions. */
    static double[] scrape(HttpClient http, String baseUrl) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(baseUrl + "/metrics"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("GET /metrics answered " + response.statusCode());
        }
        double[] out = new double[3];
        for (PrometheusText.Sample sample : PrometheusText.parse(response.body())) {
            if (!ProxyTarget.PATH.equals(sample.labels().get("endpoint"))) {
                continue;
            }
            switch (sample.name()) {
                case OVERHEAD + "_sum" -> out[0] += sample.value();
                case OVERHEAD + "_count" -> out[1] += sample.value();
                case TOKENIZE + "_sum" -> out[2] += sample.value();
                default -> { }
            }
        }
        return out;
    }

    /** A generated message and its Qwen3 token count. */
    record Text(String text, int tokens) {}

    /** Words drawn from a mixed vocabulary (prose, code, CJK, emoji) until the text holds ~{@code tokens} tokens. */
    static Text text(SplittableRandom random, ModelTokenizer tokenizer, int tokens) {
        StringBuilder out = new StringBuilder();
        while (true) {
            for (int i = 0; i < 20; i++) {
                out.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
            }
            String text = out.toString().strip();
            int count = tokenizer.encode(text).length;
            if (count >= tokens) {
                return new Text(text, count);
            }
        }
    }
}
