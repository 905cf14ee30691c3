package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.tokenize.ChatEncoder;
import io.kvroute.router.tokenize.ChatInput;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.TokenizerRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The {@code tokenize_failed} outcome: a tokenizer that throws at ingress must not fail the request. The
 * router counts the failure, routes on the estimated length, and forwards the client's body unchanged (no
 * {@code input_ids}), so the engine tokenizes itself.
 */
class IngressTokenizationTest {

    private static final String MODEL = "m";

    /** A model tokenizer whose chat encoder (and plain encoder) always throws. */
    private static final ModelTokenizer BROKEN = new ModelTokenizer() {
        @Override
        public int[] encode(String text) {
            throw new IllegalStateException("native tokenizer crashed");
        }

        @Override
        public Optional<ChatEncoder> chatEncoder() {
            return Optional.of(new ChatEncoder() {
                @Override
                public String render(ChatInput chat) {
                    return "rendered";
                }

                @Override
                public int[] encode(ChatInput chat) {
                    throw new IllegalStateException("native tokenizer crashed");
                }
            });
        }
    };

    @Test
    void throwingTokenizer_isTokenizeFailed_routesOnTheEstimate_andForwardsTheBodyUnchanged() throws Exception {
        RouterMetrics metrics = new RouterMetrics();
        IngressTokenization tokenization = new IngressTokenization(TokenizerRegistry.of(Map.of(MODEL, BROKEN)), false, metrics);
        byte[] body = ("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}")
                .getBytes(StandardCharsets.UTF_8);

        IngressTokenization.Result result = tokenization.apply(Endpoint.CHAT, MODEL, body, true);

        assertThat(result.forwardingOutcome()).isEqualTo("tokenize_failed");
        assertThat(result.tokens()).isNull();
        assertThat(result.outgoingBody()).isSameAs(body);
        assertThat(result.inputTokens()).isEqualTo(Math.max(1, body.length / 4));
        assertThat(metrics.registry().get("kvroute.input.ids.forwarding").tag("outcome", "tokenize_failed").counter().count())
                .isEqualTo(1.0);
        assertThat(metrics.registry().get("kvroute.ingress.tokenize.errors").tag("model_id", MODEL).counter().count())
                .isEqualTo(1.0);
    }

    @Test
    void throwingTokenizer_onRawText_isCountedButHasNoForwardingOutcome() throws Exception {
        RouterMetrics metrics = new RouterMetrics();
        IngressTokenization tokenization = new IngressTokenization(TokenizerRegistry.of(Map.of(MODEL, BROKEN)), false, metrics);
        byte[] body = "{\"model\":\"m\",\"prompt\":\"hello there\"}".getBytes(StandardCharsets.UTF_8);

        IngressTokenization.Result result = tokenization.apply(Endpoint.COMPLETIONS, MODEL, body, true);

        assertThat(result.forwardingOutcome()).isNull();
        assertThat(result.outgoingBody()).isSameAs(body);
        assertThat(metrics.registry().get("kvroute.ingress.tokenize.errors").tag("model_id", MODEL).counter().count())
                .isEqualTo(1.0);
    }

    /** A completion body as the front door hands it over: parsed once, token prompts sent as the caller's ids. */
    private static IngressTokenization.Result completion(IngressTokenization tokenization, String json) throws Exception {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        JsonNode root = RequestJson.parse(body);
        return tokenization.apply(Endpoint.COMPLETIONS, MODEL, body, root, true, IngressTokenization.isTokenPrompt(root));
    }

    /**
     * A prompt of token ids is never tokenized (the broken tokenizer would throw): the router routes on the ids as
     * they are, engine-equivalent, a batch on its first, and forwards the body unchanged.
     */
    @Test
    void tokenIdPrompt_routesOnItsIds_withoutTokenizing() throws Exception {
        IngressTokenization tokenization = new IngressTokenization(TokenizerRegistry.of(Map.of(MODEL, BROKEN)), false,
                new RouterMetrics());
        IngressTokenization.Result one = completion(tokenization, "{\"prompt\":[5,6,7,5.0]}");
        assertThat(one.tokens().ids()).containsExactly(5, 6, 7, 5);
        assertThat(one.tokens().engineEquivalent()).isTrue();
        assertThat(one.inputTokens()).isEqualTo(4);
        assertThat(one.forwardingOutcome()).isNull();
        IngressTokenization.Result batch = completion(tokenization, "{\"prompt\":[[9,8],[7]]}");
        assertThat(batch.tokens().ids()).containsExactly(9, 8);
        assertThat(IngressTokenization.isTokenPrompt(RequestJson.parse("{\"prompt\":[\"a\",\"b\"]}".getBytes(StandardCharsets.UTF_8))))
                .as("a batch of strings is text").isFalse();
        assertThat(IngressTokenization.isTokenPrompt(RequestJson.parse("{\"prompt\":[]}".getBytes(StandardCharsets.UTF_8))))
                .isFalse();
    }

    @Test
    void tokenIdPrompt_withAnIdThatIsNotA32BitInteger_isA400NamingPrompt() throws Exception {
        IngressTokenization tokenization = new IngressTokenization(TokenizerRegistry.of(Map.of(MODEL, BROKEN)), false,
                new RouterMetrics());
        for (String prompt : new String[] {"[5,\"a\"]", "[5,1.5]", "[5,3000000000]", "[[5,true]]", "[5,null]"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> completion(tokenization, "{\"prompt\":" + prompt + "}"))
                    .as(prompt).isInstanceOfSatisfying(ApiException.class, e -> {
                        assertThat(e.status).isEqualTo(400);
                        assertThat(e.param).isEqualTo("prompt");
                    });
        }
    }
}
