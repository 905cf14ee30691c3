package io.kvroute.bench.tokenize;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.kvroute.bench.RunContext;
import io.kvroute.bench.Scenario;
import io.kvroute.bench.VariantResult;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.router.tokenize.ChatEncoder;
import io.kvroute.router.tokenize.ChatInput;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.PrefixCachedTokenizer;
import io.kvroute.router.tokenize.SegmentParallelism;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * {@code tokenize-speed}: the router's whole first-turn time (chat template render + tokenization through
 * a chat prefix cache holding nothing, as the router does on a request it has not seen a prefix of)
 * against HF tokenizers' Rust core (npm {@code tokenizers} in Node, {@link RustEncoder}) on the same
 * input, side by side in one run.
 *
 * <p>Cases (Qwen3 tokenizer and template): one ~446k-char user message of seeded random words, 5 % of them CJK and
 * 2 % emoji (~79k tokens, as in the measurement that set the targets), and two conversations of the same total length, 8 and 24 messages after a
 * system prompt. Arms per case: {@code rust} encodes the rendered prompt (what transformers renders, so
 * the ids are the same: checked by hash, the run fails otherwise); {@code djl} encodes the same rendered
 * prompt through the router's DJL tokenizer alone; {@code router} renders and tokenizes on the request's
 * thread; {@code router-parallel} also cuts the prompt at its turn markers and tokenizes the parts on
 * {@code threads} threads ({@link SegmentParallelism}). Every router rep gets a fresh 64 MiB prefix
 * cache, so each is a first turn.
 *
 * <p>Method: warm-up of every JVM arm for {@code warmup-secs} (the JIT and the native tokenizer's caches
 * on this 2-core box need ~40 s of load to settle), then rounds of {@code reps} reps of every arm of every case, the arms
 * interleaved so background load hits them alike; medians over all rounds. Parameters:
 * {@code warmup-secs}, {@code rounds}, {@code reps}, {@code threads} (default: available processors),
 * {@code node-dir} (where {@code npm ci} installed {@code tokenizers}). Without Node or
 * {@code node_modules} the Rust arm is skipped, said in the table, and the ratios are absent.
 */
public final class TokenizeSpeedScenario implements Scenario {

    private static final ObjectMapper JSON = new ObjectMapper();
    static final String MODEL = "Qwen/Qwen3-8B";
    static final long CACHE_BYTES = 64L << 20;
    private static final String[] WORDS = ("the router tokenizes each request once at ingress and reuses the ids for routing "
            + "while workers prefill decode cache blocks across several engines with prefix hashing policy queue length "
            + "latency throughput conversation message template system assistant question answer because before after "
            + "through between during without another however therefore example number string function return value "
            + "memory pressure eviction schedule balance request response stream token model weights layer attention").split(" ");
    private static final String[] CJK = "缓存 感知 路由 前缀 命中率 東京 서울 模型 请求 推理".split(" ");
    private static final String[] EMOJI = {"😀", "🚀", "🎉", "👩‍💻", "✅"};

    @Override
    public String name() {
        return "tokenize-speed";
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
        return "real time; one encode at a time, arms interleaved, medians after warm-up";
    }

    @Override
    public String workloadDescription(boolean quick) {
        return "one " + totalChars(quick) + "-char user message (seeded random words, CJK, emoji) and two conversations"
                + " of the same length (8 and 24 messages after a system prompt), Qwen3: Rust tokenizers (Node) vs the"
                + " router's first turn, sequential and with parallel segments. Quick: a tenth of the text, 2 s warm-up"
                + " (smoke only, figures meaningless).";
    }

    static int totalChars(boolean quick) {
        return quick ? 44_600 : 446_000;
    }

    /** One input: its chat and rendered prompt. */
    record Case(String name, ChatInput chat, String rendered) {}

    /** Per case and arm, the samples in ms. */
    record Arm(String name, List<Double> ms) {
        double medianMs() {
            double[] sorted = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            if (sorted.length == 0) {
                return Double.NaN;
            }
            int mid = sorted.length / 2;
            return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
        }
    }

    @Override
    public VariantResult run(String variant, RunContext ctx) throws Exception {
        long startedNanos = System.nanoTime();
        boolean quick = ctx.quick();
        Map<String, String> params = ctx.params();
        double warmupSecs = Double.parseDouble(params.getOrDefault("warmup-secs", quick ? "2" : "45"));
        int rounds = Integer.parseInt(params.getOrDefault("rounds", quick ? "2" : "10"));
        int reps = Integer.parseInt(params.getOrDefault("reps", quick ? "1" : "3"));
        int threads = Integer.parseInt(params.getOrDefault("threads", String.valueOf(Math.max(2, Runtime.getRuntime().availableProcessors()))));
        Path dir = BundledTokenizer.qwen3();
        Files.createDirectories(ctx.outDir());
        StringBuilder md = new StringBuilder();
        List<VariantResult.CaseResult> results = new ArrayList<>();
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of(MODEL, dir), 0);
             SegmentParallelism parallelism = SegmentParallelism.ofThreads(threads)) {
            ModelTokenizer base = registry.forModel(MODEL).orElseThrow();
            List<Case> cases = cases(new SplittableRandom(ctx.seed()), totalChars(quick), base.chatEncoder().orElseThrow());
            List<Map<String, String>> forNode = new ArrayList<>();
            for (Case c : cases) {
                forNode.add(Map.of("name", c.name(), "text", c.rendered()));
            }
            Optional<Path> nodeDir = RustEncoder.findDir(params.get("node-dir"));
            String rustNote;
            RustEncoder rust = null;
            if (nodeDir.isEmpty()) {
                rustNote = "Rust arm SKIPPED: no node_modules/tokenizers (run `npm ci` in integration-tests/node-tokenizers)";
            } else {
                try {
                    rust = RustEncoder.start(nodeDir.get(), dir.resolve("tokenizer.json"), forNode);
                    rustNote = "Rust arm: npm tokenizers " + rust.version + " on Node " + nodeVersion();
                } catch (java.io.IOException e) {
                    rustNote = "Rust arm SKIPPED: node could not start (" + e.getMessage() + ")";
                }
            }
            System.out.println("tokenize-speed: " + rustNote);
            try {
                List<Map<String, Arm>> arms = new ArrayList<>();
                int[] hashes = new int[cases.size()];
                int[] tokens = new int[cases.size()];
                for (int i = 0; i < cases.size(); i++) {
                    Map<String, Arm> a = new LinkedHashMap<>();
                    for (String arm : List.of("rust", "djl", "router", "router-parallel")) {
                        a.put(arm, new Arm(arm, new ArrayList<>()));
                    }
                    arms.add(a);
                    int[] ids = firstTurn(base, cases.get(i), SegmentParallelism.NONE);
                    int[] parallelIds = firstTurn(base, cases.get(i), parallelism);
                    if (!Arrays.equals(ids, parallelIds) || !Arrays.equals(ids, base.encode(cases.get(i).rendered()))) {
                        throw new IllegalStateException(cases.get(i).name() + ": the router arms' ids differ");
                    }
                    hashes[i] = hash(ids);
                    tokens[i] = ids.length;
                }
                long warmEnd = System.nanoTime() + (long) (warmupSecs * 1e9);
                while (System.nanoTime() < warmEnd) {
                    for (Case c : cases) {
                        base.encode(c.rendered());
                        firstTurn(base, c, SegmentParallelism.NONE);
                        firstTurn(base, c, parallelism);
                    }
                }
                if (rust != null) {
                    for (int i = 0; i < cases.size(); i++) {
                        RustEncoder.Timed t = rust.time(i, 5);
                        if (t.hash() != hashes[i] || t.tokens() != tokens[i]) {
                            throw new IllegalStateException(cases.get(i).name() + ": Rust ids differ from the router's ("
                                    + t.tokens() + " vs " + tokens[i] + " tokens)");
                        }
                    }
                }
                for (int round = 0; round < rounds; round++) {
                    for (int i = 0; i < cases.size(); i++) {
                        Case c = cases.get(i);
                        Map<String, Arm> a = arms.get(i);
                        if (rust != null) {
                            for (double ms : rust.time(i, reps).ms()) {
                                a.get("rust").ms().add(ms);
                            }
                        }
                        for (int r = 0; r < reps; r++) {
                            long t0 = System.nanoTime();
                            base.encode(c.rendered());
                            long t1 = System.nanoTime();
                            firstTurn(base, c, SegmentParallelism.NONE);
                            long t2 = System.nanoTime();
                            firstTurn(base, c, parallelism);
                            long t3 = System.nanoTime();
                            a.get("djl").ms().add((t1 - t0) / 1e6);
                            a.get("router").ms().add((t2 - t1) / 1e6);
                            a.get("router-parallel").ms().add((t3 - t2) / 1e6);
                        }
                    }
                }
                md.append(String.format(Locale.ROOT, "%s; router-parallel: %d threads; warm-up %.0f s; %d rounds x %d reps"
                        + " per arm, interleaved; medians in ms%n%n", rustNote, threads, warmupSecs, rounds, reps));
                md.append("| case | chars | tokens | rust | djl alone | router first turn | router / rust "
                        + "| router-parallel | parallel / rust |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
                for (int i = 0; i < cases.size(); i++) {
                    Map<String, Arm> a = arms.get(i);
                    double rustMs = a.get("rust").medianMs();
                    double djlMs = a.get("djl").medianMs();
                    double routerMs = a.get("router").medianMs();
                    double parallelMs = a.get("router-parallel").medianMs();
                    Case c = cases.get(i);
                    md.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %.1f | %.1f | %.1f | %.3f | %.1f | %.3f |%n",
                            c.name(), c.rendered().length(), tokens[i], rustMs, djlMs, routerMs, routerMs / rustMs,
                            parallelMs, parallelMs / rustMs));
                    results.add(new VariantResult.CaseResult(c.name() + ": rust", rustMs * 1000, rustMs * 1000, 1));
                    results.add(new VariantResult.CaseResult(c.name() + ": djl alone", djlMs * 1000, rustMs * 1000, rustMs / djlMs));
                    results.add(new VariantResult.CaseResult(c.name() + ": router first turn", routerMs * 1000, rustMs * 1000,
                            rustMs / routerMs));
                    results.add(new VariantResult.CaseResult(c.name() + ": router-parallel first turn", parallelMs * 1000,
                            rustMs * 1000, rustMs / parallelMs));
                }
            } finally {
                if (rust != null) {
                    rust.close();
                }
            }
        }
        System.out.println();
        System.out.println("tokenize-speed (first turn, nothing cached; ratios are arm time / Rust time)");
        System.out.print(md);
        Files.writeString(ctx.outDir().resolve("tokenize-speed.md"), md);
        return new VariantResult(variant, List.of(), System.nanoTime() - startedNanos, Map.of(), null, results);
    }

    /** The router's first turn: a fresh prefix cache (nothing cached), render, tokenize. */
    static int[] firstTurn(ModelTokenizer base, Case c, SegmentParallelism parallelism) {
        ChatEncoder encoder = PrefixCachedTokenizer.wrap(base, CACHE_BYTES, parallelism).chatEncoder().orElseThrow();
        return encoder.encode(c.chat());
    }

    static List<Case> cases(SplittableRandom random, int totalChars, ChatEncoder encoder) {
        List<Case> out = new ArrayList<>();
        ArrayNode single = JSON.createArrayNode();
        single.addObject().put("role", "user").put("content", words(random, totalChars));
        out.add(of("one message", single, encoder));
        for (int messages : new int[] {8, 24}) {
            ArrayNode conversation = JSON.createArrayNode();
            conversation.addObject().put("role", "system").put("content", "You are a helpful assistant.");
            for (int m = 0; m < messages; m++) {
                conversation.addObject().put("role", m % 2 == 0 ? "user" : "assistant")
                        .put("content", words(random, totalChars / messages));
            }
            if (messages % 2 == 0) {
                conversation.addObject().put("role", "user").put("content", "Summarize.");
            }
            out.add(of(messages + " messages", conversation, encoder));
        }
        return out;
    }

    private static Case of(String name, ArrayNode messages, ChatEncoder encoder) {
        ChatInput chat = ChatInput.of(messages, true, true);
        return new Case(name, chat, encoder.render(chat));
    }

    static String words(SplittableRandom random, int chars) {
        StringBuilder out = new StringBuilder(chars + 32);
        while (out.length() < chars) {
            int pick = random.nextInt(100);
            String word = pick < 5 ? CJK[random.nextInt(CJK.length)]
                    : pick < 7 ? EMOJI[random.nextInt(EMOJI.length)] : WORDS[random.nextInt(WORDS.length)];
            out.append(word).append(random.nextInt(25) == 0 ? "\n" : " ");
        }
        return out.toString().strip();
    }

    /** The ids' 31-polynomial over int32, as encode-server.js computes it. */
    static int hash(int[] ids) {
        int h = 0;
        for (int id : ids) {
            h = 31 * h + id;
        }
        return h;
    }

    private static String nodeVersion() {
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            String v = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
            p.waitFor();
            return v;
        } catch (java.io.IOException e) {
            return "?";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "?";
        }
    }
}
