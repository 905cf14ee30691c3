package io.kvroute.bench.jmh;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What parsing a request body once into a tree costs against the streaming pass the router's ingress
 * used before, on a chat body of {@code bodyBytes}. {@code streamingSkip}: one pass of Jackson's streaming
 * parser that reads the top-level names and skips every value (the old cheap path's validation, which
 * built no tree; a request that needed tokens or a rewrite then parsed again). {@code tree}: one
 * {@code readTree} of the whole body (the ingress today: every path reads that one tree). {@code
 * streamingThenTree}: both, what a tokenized request paid before (a PD chat paid up to two more trees).
 * Run from the repository root:
 * {@code java -cp integration-tests/target/kvroute-bench.jar org.openjdk.jmh.Main IngressParseBench -f 1 -wi 3 -w 2s -i 5 -r 2s}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class IngressParseBench {

    private static final JsonFactory FACTORY = new JsonFactory();
    private static final ObjectMapper JSON = new ObjectMapper();

    @Param({"1024", "1048576"})
    public int bodyBytes;

    private byte[] body;

    @Setup
    public void setUp() {
        Random random = new Random(7);
        StringBuilder json = new StringBuilder("{\"model\":\"m\",\"stream\":true,\"max_tokens\":64,\"messages\":[");
        int turn = 0;
        while (json.length() < bodyBytes - 200) {
            json.append(turn == 0 ? "" : ",").append("{\"role\":\"").append(turn % 2 == 0 ? "user" : "assistant")
                    .append("\",\"content\":\"");
            int words = 20 + random.nextInt(80);
            for (int i = 0; i < words && json.length() < bodyBytes - 120; i++) {
                json.append("word").append(random.nextInt(10_000)).append(' ');
            }
            json.append("\"}");
            turn++;
        }
        json.append("],\"temperature\":0.7}");
        body = json.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Benchmark
    public int streamingSkip() throws IOException {
        int fields = 0;
        try (JsonParser parser = FACTORY.createParser(body)) {
            parser.nextToken();
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                parser.nextToken();
                parser.skipChildren();
                fields++;
            }
        }
        return fields;
    }

    @Benchmark
    public JsonNode tree() throws IOException {
        return JSON.readTree(body);
    }

    @Benchmark
    public JsonNode streamingThenTree() throws IOException {
        streamingSkip();
        return JSON.readTree(body);
    }
}
