package io.kvroute.bench.jmh;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.RequestTokens;
import io.kvroute.router.tokenize.TokenizerArchive;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
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
 * Ingress tokenization cost with the real Qwen3 tokenizer (DJL HuggingFace tokenizers): one request's
 * raw-text encode ({@code prompt}/{@code text} path) and the full chat path ({@link RequestTokens#of}:
 * ChatML render + encode), against DJL's public {@code encode(...).getIds()} as a baseline, at about 1k, 16k and 128k tokens. Sample-time mode so the median (p0.50)
 * is reported; tokens/s = {@code numTokens} (printed at setup) / median time.
 *
 * <p>The tokenizer comes from {@code -Dkvroute.tokenizer.dir=<dir>} (holding tokenizer.json or
 * tokenizer.json.gz plus the config), by default {@code router-plugin/src/test/resources/models/qwen3}
 * under the working directory (run from the repository root). Run:
 * {@code java -cp integration-tests/target/kvroute-bench.jar org.openjdk.jmh.Main TokenizeBenchmark -f 1 -wi 3 -w 1s -i 5 -r 2s}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class TokenizeBenchmark {

    @Param({"1000", "16000", "128000"})
    public int targetTokens;

    private TokenizerRegistry registry;
    private HuggingFaceTokenizer djl;
    private ModelTokenizer tokenizer;
    private Optional<ModelTokenizer> tokenizerOpt;
    private String text;
    private JsonNode chatBody;

    /** Mixed English prose, code and CJK, so the BPE sees a realistic spread of pre-tokens. */
    private static final String SEGMENT = """
            The router tokenizes each request once at ingress and reuses the ids for routing and forwarding. \
            def route(req): return min(workers, key=lambda w: (w.queue_len, -w.prefix_hit(req.ids)))
            缓存感知路由会根据前缀命中率选择工作节点，并考虑队列长度。 Numbers 12345 and symbols {}[]<>!? 😀
            """;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        Path dir = tokenizerDirForBench();
        registry = TokenizerRegistry.load(Map.of("qwen3", dir));
        tokenizer = registry.forModel("qwen3").orElseThrow();
        djl = HuggingFaceTokenizer.builder().optTokenizerPath(dir).optAddSpecialTokens(false)
                .optTruncation(false).optPadding(false).optWithOverflowingTokens(false).build();
        tokenizerOpt = Optional.of(tokenizer);
        int perSegment = tokenizer.encode(SEGMENT).length;
        text = SEGMENT.repeat(Math.max(1, targetTokens / perSegment));
        ObjectMapper json = new ObjectMapper();
        ObjectNode body = json.createObjectNode();
        body.put("model", "qwen3");
        var messages = body.putArray("messages");
        messages.addObject().put("role", "system").put("content", "You are a helpful assistant.");
        messages.addObject().put("role", "user").put("content", text);
        chatBody = body;
        System.out.printf("%n[TokenizeBenchmark] targetTokens=%d numTokens(raw)=%d numTokens(chat)=%d chatEncoder=%s%n",
                targetTokens, tokenizer.encode(text).length,
                RequestTokens.of(chatBody, tokenizerOpt).orElseThrow().ids().length,
                tokenizer.chatEncoder().isPresent());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        registry.close();
        djl.close();
    }

    @Benchmark
    public int[] encodeRawText() {
        return tokenizer.encode(text);
    }

    /** Baseline: DJL's public API, which materialises the full Encoding (tokens, offsets, masks). */
    @Benchmark
    public long[] djlFullEncoding() {
        return djl.encode(text, false, false).getIds();
    }

    @Benchmark
    public RequestTokens requestTokensChat() {
        return RequestTokens.of(chatBody, tokenizerOpt).orElseThrow();
    }

    /** The bench tokenizer directory (see the class comment), shared with the other tokenizer benchmarks. */
    static Path tokenizerDirForBench() throws IOException {
        Path src = Path.of(System.getProperty("kvroute.tokenizer.dir", "router-plugin/src/test/resources/models/qwen3"));
        if (Files.isRegularFile(src.resolve("tokenizer.json"))) {
            return src;
        }
        if (!Files.isRegularFile(src.resolve("tokenizer.json.gz"))) {
            throw new IOException("no tokenizer.json(.gz) in " + src.toAbsolutePath()
                    + "; run from the repository root or pass -Dkvroute.tokenizer.dir");
        }
        Path target = Files.createTempDirectory("kvroute-bench-tokenizer-");
        try (URLClassLoader cl = new URLClassLoader(new URL[] {src.toAbsolutePath().getParent().toUri().toURL()}, null)) {
            return TokenizerArchive.materialize(cl, src.getFileName().toString(), target);
        }
    }
}
