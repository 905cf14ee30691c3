package io.kvroute.bench.jmh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.RequestTokens;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
 * Router time for turn N of a long conversation: parse the request body and compute its ingress
 * tokens ({@link RequestTokens#of}: ChatML render + encode), with the chat prefix cache on (the
 * default) or off. The history ({@code historyTokens}, alternating user/assistant turns) has been seen
 * before; every invocation sends it with a NEW ~200-token user message, so the cached variant
 * tokenizes only that message (and the previous answer turn, new as history) while the uncached one
 * tokenizes everything. The target: at most 10 ms at 100k tokens of history (docs/benchmarks.md,
 * "Multi-turn tokenization").
 *
 * <p>Run: {@code java -cp integration-tests/target/kvroute-bench.jar org.openjdk.jmh.Main
 * MultiTurnTokenizeBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class MultiTurnTokenizeBenchmark {

    @Param({"10000", "100000"})
    public int historyTokens;

    @Param({"true", "false"})
    public boolean cache;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TURN_TEXT = """
            The router tokenizes each request once at ingress and reuses the ids for routing and forwarding. \
            def route(req): return min(workers, key=lambda w: (w.queue_len, -w.prefix_hit(req.ids)))
            缓存感知路由会根据前缀命中率选择工作节点，并考虑队列长度。 Numbers 12345 and symbols {}[]<>!? 😀
            """;

    private TokenizerRegistry registry;
    private Optional<ModelTokenizer> tokenizer;
    private ObjectNode history;
    private String newMessage;
    private long sequence;
    private byte[] body;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        registry = TokenizerRegistry.load(Map.of("qwen3", TokenizeBenchmark.tokenizerDirForBench()), cache ? 64L << 20 : 0);
        tokenizer = registry.forModel("qwen3");
        int perText = tokenizer.get().encode(TURN_TEXT).length;
        int perTurn = perText * 8;
        history = JSON.createObjectNode();
        history.put("model", "qwen3");
        ArrayNode messages = history.putArray("messages");
        messages.addObject().put("role", "system").put("content", "You are a helpful assistant.");
        for (int t = 0; (long) t * perTurn < historyTokens; t++) {
            messages.addObject().put("role", t % 2 == 0 ? "user" : "assistant").put("content", t + ": " + TURN_TEXT.repeat(8));
        }
        if (messages.get(messages.size() - 1).path("role").asText().equals("user")) {
            messages.addObject().put("role", "assistant").put("content", "ok");
        }
        newMessage = TURN_TEXT.repeat(Math.max(1, 200 / perText));
        // Turn N-1 seen once, so the cached variant starts warm, as a router mid-conversation is.
        RequestTokens.of(JSON.readTree(bodyWith("warm-up")), tokenizer);
        System.out.printf("%n[MultiTurnTokenizeBenchmark] historyTokens~%d turns=%d newMessageTokens=%d cache=%s%n",
                historyTokens, messages.size(), tokenizer.get().encode(newMessage).length, cache);
    }

    @Setup(Level.Invocation)
    public void nextBody() throws IOException {
        body = bodyWith("question " + (sequence++));
    }

    private byte[] bodyWith(String tag) throws IOException {
        ObjectNode copy = history.deepCopy();
        ((ArrayNode) copy.get("messages")).addObject().put("role", "user").put("content", tag + " " + newMessage);
        return JSON.writeValueAsString(copy).getBytes(StandardCharsets.UTF_8);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        registry.close();
    }

    /** What the router does per request for tokenization: parse the body, then ingress tokens. */
    @Benchmark
    public RequestTokens parseAndTokenize() throws IOException {
        JsonNode parsed = JSON.readTree(body);
        return RequestTokens.of(parsed, tokenizer).orElseThrow();
    }
}
