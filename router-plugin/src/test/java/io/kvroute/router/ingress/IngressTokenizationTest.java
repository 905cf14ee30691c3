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
}
