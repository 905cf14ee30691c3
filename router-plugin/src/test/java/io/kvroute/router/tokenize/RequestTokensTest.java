package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RequestTokensTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MESSAGES = "'messages':[{'role':'system','content':'Be brief.'},{'role':'user','content':'你好 😀'}]";

    private static JsonNode body(String json) {
        try {
            return JSON.readTree(json.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static Optional<ModelTokenizer> qwen3() {
        return Optional.of(Qwen3Fixture.tokenizer());
    }

    /** The real tokenizer without a chat encoder, as for a model whose template is not recognised. */
    private static Optional<ModelTokenizer> withoutEncoder() {
        ModelTokenizer real = Qwen3Fixture.tokenizer();
        return Optional.of(new ModelTokenizer() {
            @Override public int[] encode(String text) { return real.encode(text); }
            @Override public Optional<ChatEncoder> chatEncoder() { return Optional.empty(); }
        });
    }

    @Test
    void chatWithEncoder_isEngineEquivalentRenderingWithGenerationPrompt() {
        JsonNode b = body("{" + MESSAGES + "}");
        RequestTokens t = RequestTokens.of(b, qwen3()).orElseThrow();
        assertThat(t.engineEquivalent()).isTrue();
        assertThat(t.ids()).isEqualTo(Qwen3Fixture.tokenizer().encode(
                "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n你好 😀<|im_end|>\n<|im_start|>assistant\n"));
    }

    @Test
    void chatWithEncoder_honoursEnableThinkingFalseFromChatTemplateKwargs() {
        JsonNode b = body("{'chat_template_kwargs':{'enable_thinking':false}," + MESSAGES + "}");
        RequestTokens t = RequestTokens.of(b, qwen3()).orElseThrow();
        assertThat(t.ids()).isEqualTo(Qwen3Fixture.chatEncoder().encode(ChatInput.of(b.get("messages"), true, false)));
        assertThat(t.ids()).isNotEqualTo(Qwen3Fixture.chatEncoder().encode(ChatInput.of(b.get("messages"), true, true)));
    }

    @Test
    void chatWithEncoder_rendersTheGenerationPromptEvenWhenAskedNot_asSglangDoes() {
        JsonNode b = body("{'add_generation_prompt':false," + MESSAGES + "}");
        ChatEncoder plain = Qwen3Fixture.plainEncoder(Qwen3Fixture.tokenizer()::encode);
        int[] withPrompt = plain.encode(ChatInput.of(b.get("messages"), true, true));
        assertThat(RequestTokens.of(b, qwen3()).orElseThrow().ids()).isEqualTo(withPrompt)
                .isNotEqualTo(plain.encode(ChatInput.of(b.get("messages"), false, true)));
    }

    @Test
    void multimodalChat_fallsBackToRoutingOnlyTokensOfTheTextParts() {
        JsonNode b = body("{'messages':[{'role':'system','content':'S'},{'role':'user','content':[{'type':'text','text':'describe'},"
                + "{'type':'image_url','image_url':{'url':'http://x/y.png'}}]}]}");
        RequestTokens t = RequestTokens.of(b, qwen3()).orElseThrow();
        assertThat(t.engineEquivalent()).isFalse();
        assertThat(t.ids()).isEqualTo(Qwen3Fixture.tokenizer().encode("S\ndescribe"));
    }

    @Test
    void chatWithoutEncoder_isRoutingOnlyTokensOfTheMessageTexts() {
        RequestTokens t = RequestTokens.of(body("{" + MESSAGES + "}"), withoutEncoder()).orElseThrow();
        assertThat(t.engineEquivalent()).isFalse();
        assertThat(t.ids()).isEqualTo(Qwen3Fixture.tokenizer().encode("Be brief.\n你好 😀"));
    }

    @Test
    void promptString_isRoutingOnly() {
        RequestTokens t = RequestTokens.of(body("{'prompt':'Once upon a time'}"), qwen3()).orElseThrow();
        assertThat(t).isEqualTo(new RequestTokens(Qwen3Fixture.tokenizer().encode("Once upon a time"), false));
    }

    @Test
    void promptArrayOfStrings_routesOnItsFirstPrompt_asEnginesRunEachSeparately() {
        RequestTokens t = RequestTokens.of(body("{'prompt':['first','second']}"), qwen3()).orElseThrow();
        assertThat(t.ids()).isEqualTo(Qwen3Fixture.tokenizer().encode("first"));
        assertThat(t.engineEquivalent()).isFalse();
        assertThat(RequestTokens.of(body("{'text':['first','second']}"), qwen3()).orElseThrow().ids())
                .isEqualTo(Qwen3Fixture.tokenizer().encode("first"));
        assertThat(RequestTokens.of(body("{'prompt':['first',[1,2]]}"), qwen3())).isEmpty();
    }

    @Test
    void sglangGenerateText_isRoutingOnly() {
        RequestTokens t = RequestTokens.of(body("{'text':'<|im_start|>user\\nhi'}"), qwen3()).orElseThrow();
        assertThat(t.ids()).isEqualTo(Qwen3Fixture.tokenizer().encode("<|im_start|>user\nhi"));
        assertThat(t.engineEquivalent()).isFalse();
    }

    @Test
    void noTokenizerOrNoText_givesNoTokens() {
        assertThat(RequestTokens.of(body("{" + MESSAGES + "}"), Optional.empty())).isEmpty();
        assertThat(RequestTokens.of(body("{'max_tokens':3}"), qwen3())).isEmpty();
        assertThat(RequestTokens.of(body("{'prompt':''}"), qwen3())).isEmpty();
        assertThat(RequestTokens.of(body("{'prompt':[1,2,3]}"), qwen3())).isEmpty();
    }

    @Test
    void estimateTokens_isBodyBytesOverFourClampedToInt() {
        assertThat(RequestTokens.estimateTokens(0)).isZero();
        assertThat(RequestTokens.estimateTokens(4099)).isEqualTo(1024);
        assertThat(RequestTokens.estimateTokens(-5)).isZero();
        assertThat(RequestTokens.estimateTokens(Long.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE);
    }
}
