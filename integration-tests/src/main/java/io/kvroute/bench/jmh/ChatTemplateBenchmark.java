package io.kvroute.bench.jmh;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.template.ChatTemplate;
import io.kvroute.router.template.ChatTemplate.Compiled;
import io.kvroute.router.template.ChatTemplate.Rendered;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Chat-template render time against tokenization time for one ~100k-token conversation (the renderer's
 * budget is at most 5 % of tokenization): {@code render} runs the compiled template
 * ({@link ChatTemplate#render}) over 200 user/assistant messages; {@code tokenize} encodes the rendered
 * text with the real tokenizer through DJL (what the router does next). Template and tokenizer come from
 * the same model directory as {@link TokenizeBenchmark} ({@code -Dkvroute.tokenizer.dir}, default the
 * bundled Qwen3). Run from the repository root:
 * {@code java -cp integration-tests/target/kvroute-bench.jar org.openjdk.jmh.Main ChatTemplateBenchmark -f 1 -wi 3 -w 1s -i 5 -r 2s}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class ChatTemplateBenchmark {

    private static final String SEGMENT = """
            The router renders the chat template once per request and tokenizes the result. \
            def route(req): return min(workers, key=lambda w: (w.queue_len, -w.prefix_hit(req.ids)))
            缓存感知路由会根据前缀命中率选择工作节点，并考虑队列长度。 Numbers 12345 and symbols {}[]<>!? 😀
            """;
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

    private TokenizerRegistry registry;
    private ModelTokenizer tokenizer;
    private ChatTemplate template;
    private Map<String, Object> variables;
    private String rendered;

    @Setup(Level.Trial)
    @SuppressWarnings("unchecked")
    public void setUp() throws IOException {
        Path dir = TokenizeBenchmark.tokenizerDirForBench();
        registry = TokenizerRegistry.load(Map.of("model", dir), 0);
        tokenizer = registry.forModel("model").orElseThrow();
        Map<String, Object> config = new ObjectMapper().readValue(dir.resolve("tokenizer_config.json").toFile(), Map.class);
        template = ((Compiled) ChatTemplate.compile((String) config.get("chat_template"))).template();
        int perSegment = tokenizer.encode(SEGMENT).length;
        String content = SEGMENT.repeat(Math.max(1, 500 / perSegment));
        List<Object> messages = new ArrayList<>();
        messages.add(Map.of("role", "system", "content", "You are a helpful assistant."));
        for (int i = 0; i < 100; i++) {
            messages.add(Map.of("role", "user", "content", i + ": " + content));
            messages.add(Map.of("role", "assistant", "content", "Answer " + i + ": " + content));
        }
        Map<String, String> special = new java.util.LinkedHashMap<>();
        for (String k : List.of("bos_token", "eos_token", "pad_token", "unk_token")) {
            if (config.get(k) instanceof String s) {
                special.put(k, s);
            }
        }
        variables = ChatTemplate.variables(messages, null, true, special, Map.of());
        rendered = ((Rendered) template.render(variables, NOW)).text();
        System.out.printf("%n[ChatTemplateBenchmark] messages=%d chars=%d tokens=%d%n", messages.size(),
                rendered.length(), tokenizer.encode(rendered).length);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        registry.close();
    }

    @Benchmark
    public Object render() {
        return template.render(variables, NOW);
    }

    @Benchmark
    public int[] tokenize() {
        return tokenizer.encode(rendered);
    }
}
