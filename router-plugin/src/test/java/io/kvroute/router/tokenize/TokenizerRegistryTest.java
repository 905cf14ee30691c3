package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenizerRegistryTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static JsonNode vocab;
    private static String qwen3Template;

    @BeforeAll
    static void readTokenizerData() throws IOException {
        vocab = JSON.readTree(Qwen3Fixture.dir().resolve("tokenizer.json").toFile()).path("model").path("vocab");
        qwen3Template = JSON.readTree(Qwen3Fixture.dir().resolve("tokenizer_config.json").toFile()).get("chat_template").asText();
    }

    private static int addedTokenId(String content) throws IOException {
        for (JsonNode t : JSON.readTree(Qwen3Fixture.dir().resolve("tokenizer.json").toFile()).path("added_tokens")) {
            if (t.path("content").asText().equals(content)) {
                return t.path("id").asInt();
            }
        }
        throw new AssertionError("no added token " + content);
    }

    @Test
    void encode_mapsChatMlMarkersToTheirSingleSpecialIds() throws IOException {
        int[] ids = Qwen3Fixture.tokenizer().encode("<|im_start|>user\nHi<|im_end|>");
        assertThat(ids[0]).isEqualTo(addedTokenId("<|im_start|>")).isEqualTo(151644);
        assertThat(ids[ids.length - 1]).isEqualTo(addedTokenId("<|im_end|>")).isEqualTo(151645);
    }

    @Test
    void encode_addsNoSpecialTokens() {
        // Byte-level BPE: "Hello" and " world" ("Ġworld") are single vocabulary entries.
        assertThat(Qwen3Fixture.tokenizer().encode("Hello world"))
                .containsExactly(vocab.get("Hello").asInt(), vocab.get("Ġworld").asInt());
        assertThat(Qwen3Fixture.tokenizer().encode("")).isEmpty();
    }

    @Test
    void encode_neverTruncatesAPromptBeyondModelMaxLength() {
        ModelTokenizer tok = Qwen3Fixture.tokenizer();
        String segment = " The router tokenizes once at ingress.";
        int[] segmentIds = tok.encode(segment);
        int reps = 150_000 / segmentIds.length + 1; // > 150k tokens, above model_max_length 131072
        int[] ids = tok.encode(segment.repeat(reps));
        assertThat(ids).hasSize(reps * segmentIds.length);
        for (int r = 0; r < reps; r += 997) {
            assertThat(Arrays.copyOfRange(ids, r * segmentIds.length, (r + 1) * segmentIds.length)).isEqualTo(segmentIds);
        }
        assertThat(Arrays.copyOfRange(ids, ids.length - segmentIds.length, ids.length)).isEqualTo(segmentIds);
    }

    @Test
    void encode_isCorrectUnderConcurrentUseBy8Threads() throws Exception {
        ModelTokenizer tok = Qwen3Fixture.tokenizer();
        List<String> prompts = new ArrayList<>();
        List<int[]> expected = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            String p = ("thread " + t + " 你好 😀 code{" + t + "} ").repeat(50 + 40 * t);
            prompts.add(p);
            expected.add(tok.encode(p));
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    start.await();
                    int mismatches = 0;
                    for (int i = 0; i < 16; i++) {
                        int which = (thread + i) % 8;
                        if (!Arrays.equals(tok.encode(prompts.get(which)), expected.get(which))) {
                            mismatches++;
                        }
                    }
                    return mismatches;
                }));
            }
            start.countDown();
            for (Future<Integer> f : results) {
                assertThat(f.get(60, TimeUnit.SECONDS)).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void idsOnlyFastPath_isUsedForQwen3AndAgreesWithDjlEncodingOnEveryReferenceConversation() throws IOException {
        DjlModelTokenizer tok = Qwen3Fixture.djl();
        assertThat(tok.usesIdsOnlyPath()).isTrue();
        for (JsonNode row : Qwen3ReferenceParityTest.rows()) {
            String text = row.get("rendered").asText();
            assertThat(tok.idsOnly(text)).isEqualTo(tok.viaEncoding(text));
        }
    }

    @Test
    void idsOnlyFastPath_isDisabledWhenDjlWouldPrepareTheTextInJava() throws IOException {
        ai.djl.huggingface.tokenizers.HuggingFaceTokenizer lowerCasing = ai.djl.huggingface.tokenizers.HuggingFaceTokenizer
                .builder().optTokenizerPath(Qwen3Fixture.dir()).optAddSpecialTokens(false).optTruncation(false)
                .optPadding(false).optDoLowerCase(true).build();
        try (DjlModelTokenizer tok = new DjlModelTokenizer(lowerCasing, new ModelChatConfig(null, false, Map.of()),
                io.kvroute.router.worker.EngineType.SGLANG)) {
            assertThat(tok.usesIdsOnlyPath()).isFalse();
            assertThat(tok.encode("HELLO World")).isEqualTo(Qwen3Fixture.tokenizer().encode("hello world"));
        }
    }

    /**
     * DJL is configured through system properties, which a servlet container shares between web
     * applications: the load sets them for itself and leaves every one as it found it.
     */
    @Test
    void load_leavesTheJvmsDjlPropertiesAsItFoundThem() throws IOException {
        String[] keys = {"ai.djl.offline", "OPT_OUT_TRACKING", DjlOffline.CUDA_FORK, DjlOffline.RUST_LIBRARY_PATH};
        java.util.Map<String, String> saved = new java.util.HashMap<>();
        for (String key : keys) {
            saved.put(key, System.getProperty(key));
        }
        try {
            System.clearProperty("ai.djl.offline");
            System.clearProperty(DjlOffline.CUDA_FORK);
            System.clearProperty(DjlOffline.RUST_LIBRARY_PATH);
            System.setProperty("OPT_OUT_TRACKING", "operator-value");
            try (TokenizerRegistry r = TokenizerRegistry.load(Map.of("a", Qwen3Fixture.dir()))) {
                assertThat(r.forModel("a").orElseThrow().encode("hello world")).isNotEmpty();
            }
            assertThat(System.getProperty("ai.djl.offline")).isNull();
            assertThat(System.getProperty(DjlOffline.CUDA_FORK)).isNull();
            assertThat(System.getProperty(DjlOffline.RUST_LIBRARY_PATH)).isNull();
            assertThat(System.getProperty("OPT_OUT_TRACKING")).isEqualTo("operator-value");
        } finally {
            saved.forEach((key, value) -> {
                if (value == null) {
                    System.clearProperty(key);
                } else {
                    System.setProperty(key, value);
                }
            });
        }
    }

    @Test
    void classifier_namesDjlsPlatformDirectory() {
        assertThat(DjlOffline.classifier()).matches("(linux|osx|win)-[a-z0-9_]+");
        assertThat(getClass().getClassLoader().getResource(
                "native/lib/" + DjlOffline.classifier() + "/cpu/" + System.mapLibraryName("tokenizers")))
                .as("the bundled CPU library this JVM loads a private copy of").isNotNull();
    }

    @Test
    void load_sharesOneTokenizerBetweenModelsOfTheSameDirectory() throws IOException {
        try (TokenizerRegistry r = TokenizerRegistry.load(Map.of("a", Qwen3Fixture.dir(), "b", Qwen3Fixture.dir()))) {
            assertThat(r.forModel("a").orElseThrow()).isSameAs(r.forModel("b").orElseThrow());
            assertThat(r.forModel("c")).isEmpty();
            assertThat(r.forModel(null)).isEmpty();
        }
    }

    @Test
    void load_failsNamingModelAndDirectoryWhenTokenizerJsonIsMissing(@TempDir Path empty) {
        assertThatThrownBy(() -> TokenizerRegistry.load(Map.of("m1", empty)))
                .isInstanceOf(IOException.class).hasMessageContaining("m1").hasMessageContaining(empty.toString());
    }

    @Test
    void empty_hasNoTokenizers() {
        assertThat(TokenizerRegistry.empty().forModel(Qwen3Fixture.MODEL)).isEmpty();
    }

    @Test
    void qwen3Template_getsTheTemplateEncoderForSglang_behindThePrefixCache() {
        assertThat(Qwen3Fixture.djl().chatEncoder()).containsInstanceOf(TemplateChatEncoder.class);
        assertThat(((TemplateChatEncoder) Qwen3Fixture.djl().chatEncoder().orElseThrow()).engine())
                .isEqualTo(io.kvroute.router.worker.EngineType.SGLANG);
        assertThat(Qwen3Fixture.djl().textOnlyReason()).isEmpty();
        assertThat(Qwen3Fixture.tokenizer()).isInstanceOf(PrefixCachedTokenizer.class);
    }

    @Test
    void templateWithAnUnknownFilter_makesTheModelTextOnly_withTheReason(@TempDir Path dir) throws IOException {
        Files.copy(Qwen3Fixture.dir().resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
        Files.writeString(dir.resolve("tokenizer_config.json"),
                "{\"chat_template\":\"{% for m in messages %}{{ m.content | no_such_filter }}{% endfor %}\"}");
        Path none = Files.createDirectories(dir.resolve("none"));
        Files.copy(Qwen3Fixture.dir().resolve("tokenizer.json"), none.resolve("tokenizer.json"));
        try (TokenizerRegistry r = TokenizerRegistry.load(Map.of("m", dir, "n", none), 1 << 20)) {
            assertThat(r.forModel("m").orElseThrow().chatEncoder()).isEmpty();
            assertThat(r.forModel("m").orElseThrow().textOnlyReason()).contains("unsupported_filter");
            assertThat(r.textOnlyModels()).containsEntry("m", "unsupported_filter").containsEntry("n", "no_template");
            assertThat(r.chatPrefixCaches()).isEmpty();
        }
    }

    @Test
    void templateOf_readsStringOrTheNamedEntryOfAList() throws IOException {
        assertThat(ModelChatConfig.templateOf(JSON.readTree("{\"chat_template\":\"T\"}"), "default")).isEqualTo("T");
        JsonNode list = JSON.readTree(
                "{\"chat_template\":[{\"name\":\"tool_use\",\"template\":\"X\"},{\"name\":\"default\",\"template\":\"D\"}]}");
        assertThat(ModelChatConfig.templateOf(list, "default")).isEqualTo("D");
        assertThat(ModelChatConfig.templateOf(list, "tool_use")).isEqualTo("X");
        assertThat(ModelChatConfig.templateOf(JSON.readTree("{}"), "default")).isNull();
    }

    @Test
    void specialTokens_areTheNonNullNamedTokensAndExtraSpecialTokens() throws IOException {
        JsonNode config = JSON.readTree("{\"bos_token\":{\"content\":\"<s>\",\"lstrip\":false},\"eos_token\":\"</s>\","
                + "\"pad_token\":null,\"extra_special_tokens\":{\"image_token\":\"<img>\"}}");
        assertThat(ModelChatConfig.specialTokens(config))
                .containsExactlyInAnyOrderEntriesOf(Map.of("bos_token", "<s>", "eos_token", "</s>", "image_token", "<img>"));
    }

    @Test
    void chatTemplateJinja_takesPriorityOverTheConfigsTemplate(@TempDir Path dir) throws IOException {
        Files.copy(Qwen3Fixture.dir().resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"chat_template\":\"CONFIG\"}");
        Files.writeString(dir.resolve("chat_template.jinja"), "JINJA {{ messages[0].content }}");
        try (TokenizerRegistry r = TokenizerRegistry.load(Map.of("m", dir))) {
            ChatEncoder encoder = r.forModel("m").orElseThrow().chatEncoder().orElseThrow();
            assertThat(encoder.render(ChatInput.of(JSON.readTree("[{\"role\":\"user\",\"content\":\"x\"}]"), true, true)))
                    .isEqualTo("JINJA x");
        }
    }

    @Test
    void load_readsChatTemplateJinjaWhenTheConfigHasNoTemplate(@TempDir Path dir) throws IOException {
        Files.copy(Qwen3Fixture.dir().resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"eos_token\":\"<|im_end|>\"}");
        Files.writeString(dir.resolve("chat_template.jinja"), qwen3Template);
        try (TokenizerRegistry r = TokenizerRegistry.load(Map.of("m", dir))) {
            assertThat(r.forModel("m").orElseThrow().chatEncoder()).isPresent();
        }
    }
}
