package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.tokenize.TokenizerArchive;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.worker.EngineType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each reason a chat is not forwarded as {@code input_ids} has its own {@code outcome} label on
 * {@code kvroute_input_ids_forwarding_total}, on the real Qwen3 tokenizer and template: the guard's
 * refusals, a render the template itself refuses ({@code declined_<reason>}), and a model whose template
 * does not compile ({@code text_only}).
 */
class IngressForwardingOutcomeTest {

    @TempDir
    static Path tmp;
    private static TokenizerRegistry registry;

    @BeforeAll
    static void load() throws Exception {
        Path qwen = TokenizerArchive.materialize(IngressForwardingOutcomeTest.class.getClassLoader(), "models/qwen3",
                Files.createDirectories(tmp.resolve("qwen3")));
        Path textOnly = Files.createDirectories(tmp.resolve("text-only"));
        Files.copy(qwen.resolve("tokenizer.json"), textOnly.resolve("tokenizer.json"));
        Files.writeString(textOnly.resolve("tokenizer_config.json"),
                "{\"chat_template\":\"{% for m in messages %}{{ m.content | unknown_filter }}{% endfor %}\"}");
        Path gemma = TokenizerArchive.materialize(IngressForwardingOutcomeTest.class.getClassLoader(), "models/gemma3",
                Files.createDirectories(tmp.resolve("gemma3")));
        registry = TokenizerRegistry.load(Map.of("q", qwen, "t", textOnly, "g", gemma), 1 << 20);
    }

    @AfterAll
    static void close() {
        registry.close();
    }

    private static double count(RouterMetrics metrics, String model, String outcome) {
        var c = metrics.registry().find("kvroute.input.ids.forwarding").tag("model_id", model).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    private static IngressTokenization.Result chat(RouterMetrics metrics, String model, String json) throws Exception {
        IngressTokenization tokenization = new IngressTokenization(registry, false, metrics);
        return tokenization.apply(Endpoint.CHAT, model, json.replace('\'', '"').getBytes(StandardCharsets.UTF_8), true);
    }

    @Test
    void plainChat_isForwarded() throws Exception {
        RouterMetrics metrics = new RouterMetrics();
        IngressTokenization.Result r = chat(metrics, "q", "{'model':'q','messages':[{'role':'user','content':'hi'}]}");
        assertThat(r.forwardingOutcome()).isEqualTo("forwarded");
        assertThat(new String(r.outgoingBody(), StandardCharsets.UTF_8)).contains("\"input_ids\":[");
        assertThat(count(metrics, "q", "forwarded")).isEqualTo(1);
    }

    /**
     * The ids the exact KV index uses per engine: the rendered ids for both engines when they preprocess the
     * chat alike; vLLM's own rendering of list content, which the SGLang rendering declines (its message-text
     * ids are then no engine's); none for a chat the template raises on or a text-only model's chat.
     */
    @Test
    void engineTokenIds_perEngine_noneWhereNoEnginesIdsAreKnown() throws Exception {
        RouterMetrics metrics = new RouterMetrics();
        IngressTokenization.Result plain = chat(metrics, "q", "{'model':'q','messages':[{'role':'user','content':'hi'}]}");
        assertThat(plain.engineTokenIds().forEngine(EngineType.SGLANG)).isSameAs(plain.tokens().ids());
        assertThat(plain.engineTokenIds().forEngine(EngineType.VLLM)).isSameAs(plain.tokens().ids());
        assertThat(plain.engineTokenIds().forEngine(null)).isSameAs(plain.tokens().ids());

        IngressTokenization.Result parts = chat(metrics, "q", "{'model':'q','messages':[{'role':'user','content':"
                + "[{'type':'text','text':'hi'},{'type':'text','text':'there'}]}]}");
        assertThat(parts.tokens().engineEquivalent()).isFalse();
        assertThat(parts.engineTokenIds().forEngine(EngineType.SGLANG)).isNull();
        assertThat(parts.engineTokenIds().forEngine(null)).isNull();
        assertThat(parts.engineTokenIds().forEngine(EngineType.VLLM)).isEqualTo(registry.forModel("q").orElseThrow()
                .encode("<|im_start|>user\nhi\nthere<|im_end|>\n<|im_start|>assistant\n"));

        IngressTokenization.Result raising = chat(metrics, "g", "{'model':'g','messages':[{'role':'user','content':'Q'},"
                + "{'role':'assistant','content':'A'},{'role':'assistant','content':'B'},{'role':'user','content':'R'}]}");
        assertThat(raising.engineTokenIds().forEngine(EngineType.SGLANG)).isNull();
        assertThat(raising.engineTokenIds().forEngine(EngineType.VLLM)).isNull();

        IngressTokenization.Result textOnly = chat(metrics, "t", "{'model':'t','messages':[{'role':'user','content':'hi'}]}");
        assertThat(textOnly.tokens()).isNotNull();
        assertThat(textOnly.engineTokenIds().forEngine(EngineType.SGLANG)).isNull();
        assertThat(textOnly.engineTokenIds().forEngine(EngineType.VLLM)).isNull();
    }

    @Test
    void templateRaising_isDeclinedWithItsReason_andRoutesOnTheMessageTexts() throws Exception {
        RouterMetrics metrics = new RouterMetrics();
        // Gemma 3's template raises "Conversation roles must alternate user/assistant/user/assistant/..."
        IngressTokenization.Result r = chat(metrics, "g", "{'model':'g','messages':[{'role':'user','content':'Q'},"
                + "{'role':'assistant','content':'A'},{'role':'assistant','content':'B'},{'role':'user','content':'R'}]}");
        assertThat(r.forwardingOutcome()).isEqualTo("declined_template_raise_exception");
        assertThat(r.tokens().engineEquivalent()).isFalse();
        assertThat(r.tokens().declineReason()).isEqualTo("template_raise_exception");
        assertThat(new String(r.outgoingBody(), StandardCharsets.UTF_8)).doesNotContain("input_ids");
        assertThat(count(metrics, "g", "declined_template_raise_exception")).isEqualTo(1);
        assertThat(chat(metrics, "g", "{'model':'g','messages':[{'role':'user','content':'Q'}]}").forwardingOutcome())
                .isEqualTo("forwarded");
    }

    @Test
    void toolsAndTrailingAssistant_haveTheirOwnGuardLabels() throws Exception {
        RouterMetrics metrics = new RouterMetrics();
        assertThat(chat(metrics, "q", "{'tools':[{'type':'function','function':{'name':'f'}}],"
                + "'messages':[{'role':'user','content':'hi'}]}").forwardingOutcome()).isEqualTo("ineligible_tools");
        assertThat(chat(metrics, "q", "{'messages':[{'role':'user','content':'hi'},{'role':'assistant','content':'A'}]}")
                .forwardingOutcome()).isEqualTo("ineligible_trailing_assistant");
        assertThat(count(metrics, "q", "ineligible_tools")).isEqualTo(1);
        assertThat(count(metrics, "q", "ineligible_trailing_assistant")).isEqualTo(1);
    }

    @Test
    void textOnlyModel_isCountedPerChat_andNeverForwards() throws Exception {
        RouterMetrics metrics = new RouterMetrics();
        IngressTokenization.Result r = chat(metrics, "t", "{'model':'t','messages':[{'role':'user','content':'hi'}]}");
        assertThat(new String(r.outgoingBody(), StandardCharsets.UTF_8)).doesNotContain("input_ids");
        assertThat(r.tokens()).isNotNull();
        assertThat(r.tokens().engineEquivalent()).isFalse();
        assertThat(count(metrics, "t", "text_only")).isEqualTo(1);
    }
}
