package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.worker.EngineType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tokenizing a rendered chat in parts on several threads gives exactly the ids of one pass: over every
 * golden conversation (transformers' own renderings of five models' templates) cut at every turn marker,
 * over randomized texts full of markers, lookalikes, odd whitespace, CJK and emoji, and end to end through
 * the registry's chat encoders with the prefix cache on and off. Cuts are forced short here
 * ({@code minPartChars} 1) so every marker occurrence is a cut.
 */
class SegmentParallelEncoderTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Models whose template starts messages at a safe added token; DeepSeek V3's role tokens are normalized. */
    private static final List<String> WITH_MARKERS = List.of("llama3", "llama3_1", "gemma3", "qwen3");
    private static final ExecutorService POOL = Executors.newFixedThreadPool(3);
    private static final Map<String, Path> DIRS = new ConcurrentHashMap<>();

    @AfterAll
    static void stop() {
        POOL.shutdownNow();
    }

    static synchronized Path dir(String model) {
        return DIRS.computeIfAbsent(model, m -> {
            try {
                Path tmp = Files.createTempDirectory("kvroute-seg-" + m + "-");
                tmp.toFile().deleteOnExit();
                return TokenizerArchive.materialize(SegmentParallelEncoderTest.class.getClassLoader(), "models/" + m, tmp);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private static DjlModelTokenizer djl(TokenizerRegistry registry, String model) {
        return (DjlModelTokenizer) registry.forModel(model).orElseThrow();
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "llama3_1", "gemma3", "qwen3", "deepseek_v3"})
    void everyGoldenConversation_cutAtEveryMarker_equalsOnePassAndTheGoldenIds(String model) throws Exception {
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of(model, dir(model)), 0)) {
            DjlModelTokenizer tok = djl(registry, model);
            if (!WITH_MARKERS.contains(model)) {
                assertThat(tok.turnMarkers().found()).as(model + " has no safe marker: stays sequential").isFalse();
                return;
            }
            String[] markers = tok.turnMarkers().markers();
            assertThat(SegmentParallelEncoder.probe(markers, tok::encode)).as(model + " probe").isTrue();
            SegmentParallelEncoder parallel = new SegmentParallelEncoder(markers, tok::encode, POOL, 64, 1);
            int cut = 0;
            int checked = 0;
            for (JsonNode row : golden(model)) {
                String text = row.path("text").asText(null);
                if (text == null || row.hasNonNull("error")) {
                    continue;
                }
                JsonNode want = row.hasNonNull("tokenizer_json_ids") ? row.get("tokenizer_json_ids") : row.get("ids");
                int[] expected = new int[want.size()];
                for (int i = 0; i < expected.length; i++) {
                    expected[i] = want.get(i).asInt();
                }
                int[] ids = parallel.apply(text);
                assertThat(ids).as("%s #%d", model, row.path("id").asInt()).isEqualTo(expected);
                checked++;
                cut += parallel.cuts(text).length > 0 ? 1 : 0;
            }
            assertThat(checked).as(model + " conversations checked").isGreaterThan(200);
            assertThat(cut).as(model + " conversations actually cut").isGreaterThan(checked / 2);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "gemma3", "qwen3"})
    void randomizedTexts_anyThreadsAndPartLengths_equalOnePass(String model) throws Exception {
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of(model, dir(model)), 0)) {
            DjlModelTokenizer tok = djl(registry, model);
            String[] markers = tok.turnMarkers().markers();
            List<String> pieces = new ArrayList<>(List.of("hello", " world", "  ", "\n", "\r\n", "\u00a0", "\u0085", "\u3000",
                    "\ufeff", "缓存感知", "路由", "😀", "🚀x", "123", "4567", "'s", "don't", "\t", "<|", "|>", "<|im_start",
                    "im_start|>", "<start_of_turn", "<|start_header_id", "user", "assistant", "é", "e\u0301", "ﬁ"));
            pieces.addAll(List.of(markers));
            pieces.addAll(List.of(markers));
            SplittableRandom random = new SplittableRandom(27);
            for (int round = 0; round < 400; round++) {
                StringBuilder text = new StringBuilder();
                int n = 1 + random.nextInt(120);
                for (int i = 0; i < n; i++) {
                    text.append(pieces.get(random.nextInt(pieces.size())));
                }
                String s = text.toString();
                SegmentParallelEncoder parallel = new SegmentParallelEncoder(markers, tok::encode, POOL,
                        2 + random.nextInt(6), 1 + random.nextInt(40));
                assertThat(parallel.apply(s)).as("%s round %d: %s", model, round, s).isEqualTo(tok.encode(s));
            }
        }
    }

    /** The registry's chat encoders with parallel parts, cache off and on, equal the sequential ones on every golden chat. */
    @ParameterizedTest
    @ValueSource(longs = {0, 1 << 20})
    void registryChatEncoders_withParallelParts_equalSequential(long cacheBytes) throws Exception {
        for (String model : List.of("llama3", "qwen3")) {
            try (TokenizerRegistry sequential = TokenizerRegistry.load(Map.of(model, dir(model)), cacheBytes);
                 TokenizerRegistry parallel = TokenizerRegistry.load(Map.of(model, dir(model)), cacheBytes,
                         EngineType.SGLANG, SegmentParallelism.over(POOL, 3, 1))) {
                ChatEncoder one = sequential.forModel(model).orElseThrow().chatEncoder().orElseThrow();
                ModelTokenizer wrapped = parallel.forModel(model).orElseThrow();
                assertThat(wrapped).isInstanceOf(cacheBytes == 0 ? SegmentParallelTokenizer.class : PrefixCachedTokenizer.class);
                ChatEncoder many = wrapped.chatEncoder().orElseThrow();
                int compared = 0;
                for (JsonNode row : golden(model)) {
                    ChatInput chat = new ChatInput(row.get("messages"), row.get("tools"),
                            row.path("add_generation_prompt").asBoolean(true),
                            JSON.convertValue(row.path("kwargs").isObject() ? row.get("kwargs") : JSON.createObjectNode(), Map.class),
                            false);
                    int[] expected;
                    try {
                        expected = one.encode(chat);
                    } catch (UnsupportedChatException declined) {
                        continue;
                    }
                    assertThat(many.encode(chat)).as("%s #%d", model, row.path("id").asInt()).isEqualTo(expected);
                    compared++;
                }
                assertThat(compared).as(model).isGreaterThan(200);
            }
        }
    }

    /**
     * Gemma 3's tokenizer with a Metaspace pre-tokenizer of {@code prepend_scheme: first} (Llama 2's style),
     * which prepends {@code ▁} only to the piece at the text's start. Every part after the first starts
     * with the marker, so the piece after it is never at offset 0 in the part either: cutting stays exact,
     * the probe passes and the golden Gemma 3 texts encode alike in parts and whole.
     */
    @Test
    void metaspacePrependFirst_cutsAtMarkersStayExact() throws Exception {
        Path gemma = dir("gemma3");
        Path dir = Files.createTempDirectory("kvroute-seg-metaspace-");
        dir.toFile().deleteOnExit();
        com.fasterxml.jackson.databind.node.ObjectNode json =
                (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(gemma.resolve("tokenizer.json").toFile());
        json.putNull("normalizer");
        json.putObject("pre_tokenizer").put("type", "Metaspace").put("replacement", "\u2581")
                .put("prepend_scheme", "first").put("split", false);
        JSON.writeValue(dir.resolve("tokenizer.json").toFile(), json);
        Files.copy(gemma.resolve("tokenizer_config.json"), dir.resolve("tokenizer_config.json"));
        dir.resolve("tokenizer.json").toFile().deleteOnExit();
        dir.resolve("tokenizer_config.json").toFile().deleteOnExit();
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of("m", dir), 0, EngineType.SGLANG,
                SegmentParallelism.over(POOL, 3, 1))) {
            ModelTokenizer wrapped = registry.forModel("m").orElseThrow();
            assertThat(wrapped).isInstanceOf(SegmentParallelTokenizer.class);
            try (TokenizerRegistry plain = TokenizerRegistry.load(Map.of("m", dir), 0)) {
                DjlModelTokenizer tok = djl(plain, "m");
                assertThat(tok.encode("a b")[0]).as("▁ prepended at the start").isEqualTo(tok.encode("\u2581a b")[0]);
                SegmentParallelEncoder parallel = new SegmentParallelEncoder(tok.turnMarkers().markers(), tok::encode, POOL, 64, 1);
                int checked = 0;
                for (JsonNode row : golden("gemma3")) {
                    String text = row.path("text").asText(null);
                    if (text != null && !row.hasNonNull("error")) {
                        assertThat(parallel.apply(text)).as("#%d", row.path("id").asInt()).isEqualTo(tok.encode(text));
                        checked++;
                    }
                }
                assertThat(checked).isGreaterThan(100);
            }
        }
    }

    /** The probe refuses an encoder whose ids depend on where the text starts, and accepts one that does not. */
    @Test
    void probe_refusesAnEncoderThatMarksTheTextStart() {
        java.util.function.Function<String, int[]> chars = t -> t.chars().toArray();
        java.util.function.Function<String, int[]> startMarked = t -> java.util.stream.IntStream.concat(
                java.util.stream.IntStream.of(-1), t.chars()).toArray();
        assertThat(SegmentParallelEncoder.probe(new String[] {"<|im_start|>"}, chars)).isTrue();
        assertThat(SegmentParallelEncoder.probe(new String[] {"<|im_start|>"}, startMarked)).isFalse();
    }

    /** A pool that refuses every part, or runs nothing: the caller encodes every part, once each. */
    @Test
    void refusingOrIdlePool_callerEncodesEveryPartOnce() throws Exception {
        try (TokenizerRegistry registry = TokenizerRegistry.load(Map.of("qwen3", dir("qwen3")), 0)) {
            DjlModelTokenizer tok = djl(registry, "qwen3");
            String text = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi 😀<|im_end|>\n"
                    + "<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\n缓存<|im_end|>\n<|im_start|>assistant\n";
            AtomicInteger calls = new AtomicInteger();
            java.util.function.Function<String, int[]> counting = t -> {
                calls.incrementAndGet();
                return tok.encode(t);
            };
            String[] markers = tok.turnMarkers().markers();
            SegmentParallelEncoder refusing = new SegmentParallelEncoder(markers, counting, r -> {
                throw new RejectedExecutionException("full");
            }, 4, 1);
            assertThat(refusing.apply(text)).isEqualTo(tok.encode(text));
            assertThat(calls.get()).isEqualTo(4);
            List<Runnable> parked = new ArrayList<>();
            calls.set(0);
            SegmentParallelEncoder idle = new SegmentParallelEncoder(markers, counting, parked::add, 4, 1);
            assertThat(idle.apply(text)).isEqualTo(tok.encode(text));
            parked.forEach(Runnable::run); // a worker reaching a part the caller already ran: no second encode
            assertThat(calls.get()).isEqualTo(4);
            assertThat(parked).hasSize(3);
        }
    }

    @Test
    void cuts_balanceAtMarkers_andRespectTheMinimumPartLength() {
        String m = "<|im_start|>";
        String text = m + "a".repeat(100) + m + "b".repeat(100) + m + "c".repeat(100) + m + "d".repeat(100);
        SegmentParallelEncoder two = new SegmentParallelEncoder(new String[] {m}, t -> new int[0], Runnable::run, 2, 10);
        assertThat(two.cuts(text)).containsExactly(224);
        SegmentParallelEncoder four = new SegmentParallelEncoder(new String[] {m}, t -> new int[0], Runnable::run, 4, 10);
        assertThat(four.cuts(text)).containsExactly(112, 224, 336);
        SegmentParallelEncoder tooShort = new SegmentParallelEncoder(new String[] {m}, t -> new int[0], Runnable::run, 4, 200);
        assertThat(tooShort.cuts(text)).containsExactly(224);
        assertThat(four.cuts("a".repeat(500))).isEmpty();
    }

    static List<JsonNode> golden(String model) {
        List<JsonNode> out = new ArrayList<>();
        try (InputStream raw = SegmentParallelEncoderTest.class.getClassLoader().getResourceAsStream("golden/" + model + ".jsonl.gz");
             BufferedReader in = new BufferedReader(new InputStreamReader(new GZIPInputStream(raw), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.add(JSON.readTree(line));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}
