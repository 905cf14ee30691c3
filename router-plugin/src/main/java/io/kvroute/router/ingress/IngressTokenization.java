package io.kvroute.router.ingress;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.policy.EngineTokenIds;
import io.kvroute.router.tokenize.ChatEncoder;
import io.kvroute.router.tokenize.ChatInput;
import io.kvroute.router.tokenize.ForwardingGuard;
import io.kvroute.router.tokenize.ModelTokenizer;
import io.kvroute.router.tokenize.RequestTokens;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.tokenize.UnsupportedChatException;
import io.kvroute.router.worker.EngineType;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tokenize once at ingress. A chat request on a model with a chat encoder, or any
 * request when the policy needs tokens, is tokenized once from the tree the front door parsed once; the same
 * {@link RequestTokens} feed routing and, when they are engine-equivalent and
 * {@link ForwardingGuard} allows it, the outgoing body as {@code input_ids} so the engine skips its
 * own tokenization. {@code messages} stay in the body so the engine can derive stop tokens.
 * Everything else keeps the cheap path: no tokenizer, input length estimated as body bytes / 4.
 *
 * <p>The ids are spliced into the original bytes just before the closing brace, so a 1 MiB body is
 * never re-serialized.
 */
final class IngressTokenization {

    private static final Logger LOG = LoggerFactory.getLogger(IngressTokenization.class);
    private static final String DEFAULT_MODEL = "*";

    /**
     * @param tokens the request's tokens, or null when none were computed
     * @param outgoingBody the body to send to workers
     * @param inputTokens exact when tokens exist, else the bytes / 4 estimate
     * @param forwardingOutcome forwarded / disabled / a {@link ForwardingGuard.Outcome#label} /
     *     declined_&lt;reason&gt; (the render was declined) / tokenize_failed for chat requests on a model
     *     with a chat encoder, else null
     */
    record Result(RequestTokens tokens, byte[] outgoingBody, long inputTokens, String forwardingOutcome, String routingText,
            EngineTokenIds engineTokenIds) {

        Result(RequestTokens tokens, byte[] outgoingBody, long inputTokens, String forwardingOutcome, String routingText) {
            this(tokens, outgoingBody, inputTokens, forwardingOutcome, routingText, null);
        }

        Result(RequestTokens tokens, byte[] outgoingBody, long inputTokens, String forwardingOutcome) {
            this(tokens, outgoingBody, inputTokens, forwardingOutcome, null);
        }
    }

    private final TokenizerRegistry registry;
    private final boolean forwardingDisabled;
    private final RouterMetrics metrics;

    /** The router's clock, for the tokenize duration. */
    private final java.util.function.LongSupplier nanoClock;

    IngressTokenization(TokenizerRegistry registry, boolean forwardingDisabled, RouterMetrics metrics,
            java.util.function.LongSupplier nanoClock) {
        this.registry = registry;
        this.forwardingDisabled = forwardingDisabled;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
    }

    /** On the system clock: for tests of the tokenization alone. */
    IngressTokenization(TokenizerRegistry registry, boolean forwardingDisabled, RouterMetrics metrics) {
        this(registry, forwardingDisabled, metrics, System::nanoTime);
    }

    Optional<ModelTokenizer> tokenizerFor(String model) {
        Optional<ModelTokenizer> exact = model == null ? Optional.empty() : registry.forModel(model);
        return exact.isPresent() ? exact : registry.forModel(DEFAULT_MODEL);
    }

    /** Parses {@code body} itself: for tests of the tokenization alone. */
    Result apply(Endpoint endpoint, String model, byte[] body, boolean policyNeedsTokens) throws ApiException {
        return apply(endpoint, model, body, RequestJson.parse(body), policyNeedsTokens, false);
    }

    /**
     * @param body the request's bytes as they would be forwarded
     * @param root the same body, parsed once by the front door (never parsed again here)
     * @param callerSentIds the body already carries {@code input_ids}, or is a completion whose prompt is token
     *     ids ({@link #isTokenPrompt}): the caller tokenized, so the
     *     router never tokenizes again; a token-hungry policy routes on the caller's ids, and nothing
     *     is forwarded (the ids are already there)
     */
    Result apply(Endpoint endpoint, String model, byte[] body, JsonNode root, boolean policyNeedsTokens,
            boolean callerSentIds) throws ApiException {
        long estimate = Math.max(1, RequestTokens.estimateTokens(body.length));
        Optional<ModelTokenizer> tokenizer = tokenizerFor(model);
        boolean chatEncoder = endpoint == Endpoint.CHAT && tokenizer.flatMap(ModelTokenizer::chatEncoder).isPresent();
        if (callerSentIds) {
            String outcome = null;
            if (chatEncoder) {
                // multimodal wins over every other reason, as in ForwardingGuard, so that metric counts them all
                outcome = ForwardingGuard.check(root) == ForwardingGuard.Outcome.INELIGIBLE_MULTIMODAL
                        ? ForwardingGuard.Outcome.INELIGIBLE_MULTIMODAL.label()
                        : ForwardingGuard.Outcome.INELIGIBLE_INPUT_IDS.label();
                metrics.inputIdsForwarding(model == null ? "default" : model, outcome);
            }
            if (!policyNeedsTokens) {
                return new Result(null, body, estimate, outcome);
            }
            int[] ids = callerIds(root);
            return ids == null ? new Result(null, body, estimate, outcome)
                    : new Result(new RequestTokens(ids, true), body, Math.max(1, ids.length), outcome);
        }
        if (tokenizer.isEmpty() && policyNeedsTokens) {
            // No tokenizer for this model: a token-hungry policy keys on the raw text instead.
            return new Result(null, body, estimate, null, routingText(root));
        }
        if (endpoint == Endpoint.CHAT && !chatEncoder && tokenizer.isPresent() && tokenizer.get().textOnlyReason().isPresent()) {
            // the model's template is not rendered (logged once at load): counted per request
            metrics.inputIdsForwarding(model == null ? "default" : model, "text_only");
        }
        if (tokenizer.isEmpty() || (!chatEncoder && !policyNeedsTokens)) {
            return new Result(null, body, estimate, null);
        }
        String modelLabel = model == null ? "default" : model;
        if (mayDecodeToLoneSurrogate(body)) {
            rejectUnpairedSurrogates(root);
        }
        Optional<RequestTokens> tokens;
        long start = nanoClock.getAsLong();
        try {
            tokens = RequestTokens.of(root, tokenizer, registry.engine());
        } catch (RuntimeException e) {
            LOG.warn("ingress tokenization failed for model {}: {}", modelLabel, e.toString());
            metrics.ingressTokenizeError(modelLabel);
            if (chatEncoder) {
                metrics.inputIdsForwarding(modelLabel, "tokenize_failed");
            }
            return new Result(null, body, estimate, chatEncoder ? "tokenize_failed" : null);
        }
        metrics.ingressTokenizeDuration(modelLabel, nanoClock.getAsLong() - start);
        long inputTokens = tokens.map(t -> (long) Math.max(1, t.ids().length)).orElse(estimate);
        if (!chatEncoder) {
            // a chat on a text-only model routes on its message texts, which no engine computed, and a completion
            // prompt on a tokenizer whose ids no engine computes (DeepSeek V3 under transformers 5): no exact lookup
            boolean noEngineIds = endpoint == Endpoint.CHAT || tokenizer.get().idsUntrustedReason().isPresent();
            EngineTokenIds byEngine = noEngineIds ? tokens.map(t -> EngineTokenIds.routingOnly(t.ids())).orElse(null)
                    : tokens.map(t -> completionIdsByEngine(root, tokenizer.get(), t.ids())).orElse(null);
            return new Result(tokens.orElse(null), body, inputTokens, null, null, byEngine);
        }
        String outcome;
        if (forwardingDisabled) {
            outcome = "disabled";
        } else {
            ForwardingGuard.Outcome guard = ForwardingGuard.check(root);
            if (guard != ForwardingGuard.Outcome.FORWARD) {
                outcome = guard.label();
            } else if (tokens.map(RequestTokens::engineEquivalent).orElse(false)) {
                outcome = "forwarded";
            } else {
                // the template raised, or the renderer cannot prove its output equal to the engine's
                outcome = tokens.map(RequestTokens::declineReason).map(r -> "declined_" + r).orElse("ineligible");
            }
        }
        metrics.inputIdsForwarding(modelLabel, outcome);
        byte[] outgoing = outcome.equals("forwarded") ? withInputIds(body, tokens.get().ids()) : body;
        return new Result(tokens.orElse(null), outgoing, inputTokens, outcome, null,
                tokens.map(t -> engineTokenIds(tokenizer.get().chatEncoder().orElseThrow(), root, t, modelLabel))
                        .orElse(null));
    }

    /**
     * A completion prompt's ids per engine of a mixed fleet, or null when every engine computes {@code ids} (the
     * usual case). Engines differ only when the client sends {@code "add_special_tokens": false}: vLLM follows
     * it, SGLang never reads it ({@link RequestTokens#addsSpecialTokens}), so the workers of the engine the
     * registry does not tokenize for are looked up with the other encoding, computed on first use.
     */
    private EngineTokenIds completionIdsByEngine(JsonNode root, ModelTokenizer tokenizer, int[] ids) {
        if (RequestTokens.addsSpecialTokens(root, EngineType.VLLM)) {
            return null;
        }
        boolean primaryAdds = RequestTokens.addsSpecialTokens(root, registry.engine());
        return new EngineTokenIds(ids, engine -> RequestTokens.addsSpecialTokens(root, engine) == primaryAdds ? ids
                : RequestTokens.of(root, Optional.of(tokenizer), engine).map(RequestTokens::ids).orElse(null));
    }

    /**
     * The chat's ids as each engine of a mixed fleet computes them, for the exact KV index: the ids above for
     * the engine the registry renders for and every engine that preprocesses this chat alike; another
     * engine's rendering only when the exact index first asks for one of its workers (so inside the policy's
     * select, not the tokenize span). Where an engine's preprocessing of this chat is not reproduced (the
     * ids above are then the message texts for the registry's own engine), its workers get no exact answer
     * rather than an answer for ids they never computed.
     */
    private EngineTokenIds engineTokenIds(ChatEncoder encoder, JsonNode root, RequestTokens tokens, String modelLabel) {
        ChatInput chat = ChatInput.fromBody(root);
        int[] ids = tokens.ids();
        int[] sameInputs = tokens.engineEquivalent() ? ids : null;
        return new EngineTokenIds(ids, tokens.engineEquivalent(), engine -> {
            try {
                return encoder.encodeFor(engine, chat).orElse(sameInputs);
            } catch (UnsupportedChatException e) {
                return null;
            } catch (RuntimeException e) {
                LOG.warn("tokenization for {} workers failed for model {}: {}", engine.label(), modelLabel, e.toString());
                metrics.ingressTokenizeError(modelLabel);
                return null;
            }
        });
    }

    /**
     * False when no string in {@code body} can decode to an unpaired surrogate, so the tree walk of
     * {@link #rejectUnpairedSurrogates} can be skipped (a scan of the raw bytes is several times cheaper than
     * walking every decoded string of a long chat). A lone surrogate can only come from a {@code \\u} escape:
     * well-formed four-byte UTF-8 always decodes to a pair, and Jackson refuses a surrogate encoded as the
     * three bytes {@code ED A0..BF}, which are flagged here as well should a parser ever let them through.
     */
    static boolean mayDecodeToLoneSurrogate(byte[] body) {
        for (int i = 0, last = body.length - 1; i < last; i++) {
            byte b = body[i];
            if ((b == '\\' && body[i + 1] == 'u') || (b == (byte) 0xED && (body[i + 1] & 0xE0) == 0xA0)) {
                return true;
            }
        }
        return false;
    }

    /**
     * A 400 naming the field when text the router is about to tokenize holds an unpaired UTF-16
     * surrogate ({@code "\ud800"} is valid JSON). The engine rejects such a request anyway, and
     * through the DJL bridge one lone surrogate turns every supplementary character and NUL of the
     * same string into U+FFFD, which corrupts the routing key as well.
     */
    static void rejectUnpairedSurrogates(JsonNode root) throws ApiException {
        JsonNode messages = root.path("messages");
        for (int i = 0; i < messages.size(); i++) {
            JsonNode content = messages.path(i).path("content");
            check(content, "messages[" + i + "].content");
            for (int j = 0; content.isArray() && j < content.size(); j++) {
                check(content.path(j).path("text"), "messages[" + i + "].content[" + j + "].text");
            }
        }
        for (String field : new String[] {"prompt", "text"}) {
            JsonNode value = root.path(field);
            check(value, field);
            for (int j = 0; value.isArray() && j < value.size(); j++) {
                check(value.path(j), field + "[" + j + "]");
            }
        }
    }

    /** A 400 naming {@code field} when {@code value} is a string holding an unpaired UTF-16 surrogate. */
    static void check(JsonNode value, String field) throws ApiException {
        if (!value.isTextual()) {
            return;
        }
        String s = value.textValue();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new ApiException(400, "'" + field + "' contains an unpaired UTF-16 surrogate at index " + i);
            }
        }
    }

    /**
     * Whether {@code root} is a completion whose {@code prompt} is token ids: an array of integers (one token prompt)
     * or of arrays (a batch of them), as vLLM ({@code parse_and_batch_prompt}, vllm/inputs/parse.py: a list of ints
     * is one tokens prompt, a list of lists one per element) and SGLang's {@code /v1/completions} take it. The
     * engine runs those ids as they are (no special tokens added, nothing tokenized), so the router routes on them
     * as on a caller's {@code input_ids}.
     */
    static boolean isTokenPrompt(JsonNode root) {
        JsonNode prompt = root.path("prompt");
        if (!prompt.isArray() || prompt.isEmpty()) {
            return false;
        }
        JsonNode first = prompt.get(0);
        return first.isNumber() || first.isArray();
    }

    /**
     * The caller's flat token ids: {@code input_ids}, else a token-id {@code prompt} ({@link #isTokenPrompt}); a
     * batch of arrays routes on its first. Null when unusable; a 400 naming the field when an id is not an
     * integer of 32 bits (as the engines refuse it).
     */
    static int[] callerIds(JsonNode root) throws ApiException {
        String field = root.path("input_ids").isArray() ? "input_ids" : "prompt";
        JsonNode ids = root.path(field);
        if (ids.isArray() && ids.size() > 0 && ids.get(0).isArray()) {
            ids = ids.get(0);
        }
        if (!ids.isArray() || ids.isEmpty()) {
            return null;
        }
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode id = ids.get(i);
            if (!id.canConvertToInt() || !(id.isIntegralNumber() || id.asDouble() == Math.rint(id.asDouble()))) {
                throw new ApiException(400, "'" + field + "' must be integers");
            }
            out[i] = id.asInt();
        }
        return out;
    }

    /** The prompt text of a body: message contents joined by newlines, or {@code prompt}, or {@code text}. */
    static String routingText(JsonNode root) {
        StringBuilder text = new StringBuilder();
        JsonNode messages = root.path("messages");
        if (messages.isArray()) {
            for (JsonNode message : messages) {
                JsonNode content = message.path("content");
                if (content.isTextual()) {
                    text.append(content.asText()).append('\n');
                } else if (content.isArray()) {
                    for (JsonNode part : content) {
                        if (part.path("text").isTextual()) {
                            text.append(part.path("text").asText()).append('\n');
                        }
                    }
                }
            }
            return text.toString();
        }
        for (String field : new String[] {"prompt", "text"}) {
            JsonNode value = root.path(field);
            if (value.isTextual()) {
                return value.asText();
            }
            if (value.isArray()) {
                value.forEach(v -> text.append(v.asText()).append('\n'));
                return text.toString();
            }
        }
        return null;
    }

    private static final byte[] INPUT_IDS_HEAD = ",\"input_ids\":[".getBytes(StandardCharsets.US_ASCII);

    /**
     * {@code body} with {@code ,"input_ids":[...]} inserted before its final closing brace, the digits written
     * straight into bytes: 100k ids through a StringBuilder, a String and two stream copies were most of the
     * router's time on a 100k-token chat turn (MultiTurnTokenizeBenchmark; about 2x faster this way).
     */
    static byte[] withInputIds(byte[] body, int[] ids) {
        int close = body.length - 1;
        while (close >= 0 && body[close] != '}') {
            close--;
        }
        if (close < 0) {
            throw new IllegalStateException("validated JSON object without a closing brace");
        }
        // one pass into the worst case (an int is at most 11 characters, plus its comma), then cut to size:
        // cheaper than a sizing pass, whose per-id digit-count branches mispredict on mixed-length ids
        long bound = (long) close + INPUT_IDS_HEAD.length + 12L * ids.length + 2;
        if (bound > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("body with input_ids exceeds an array: " + bound + " bytes");
        }
        byte[] out = new byte[(int) bound];
        System.arraycopy(body, 0, out, 0, close);
        int pos = close;
        System.arraycopy(INPUT_IDS_HEAD, 0, out, pos, INPUT_IDS_HEAD.length);
        pos += INPUT_IDS_HEAD.length;
        for (int i = 0; i < ids.length; i++) {
            if (i > 0) {
                out[pos++] = ',';
            }
            pos = writeDecimal(out, pos, ids[i]);
        }
        out[pos++] = ']';
        out[pos++] = '}';
        return java.util.Arrays.copyOf(out, pos);
    }

    /** Decimal digits of a non-negative {@code v}: comparisons only. */
    private static int digits(int v) {
        if (v < 100_000) {
            return v < 100 ? (v < 10 ? 1 : 2) : v < 1_000 ? 3 : v < 10_000 ? 4 : 5;
        }
        return v < 10_000_000 ? (v < 1_000_000 ? 6 : 7) : v < 100_000_000 ? 8 : v < 1_000_000_000 ? 9 : 10;
    }

    private static final byte[] INT_MIN = Integer.toString(Integer.MIN_VALUE).getBytes(StandardCharsets.US_ASCII);
    /** The tens and ones digit of 0..99, so the writer divides once per two digits (as the JDK's own does). */
    private static final byte[] TENS = new byte[100];
    private static final byte[] ONES = new byte[100];

    static {
        for (int i = 0; i < 100; i++) {
            TENS[i] = (byte) ('0' + i / 10);
            ONES[i] = (byte) ('0' + i % 10);
        }
    }

    /** Writes {@code value} in decimal ASCII at {@code pos}; returns the position after it. */
    private static int writeDecimal(byte[] out, int pos, int value) {
        if (value < 0) {
            if (value == Integer.MIN_VALUE) {
                System.arraycopy(INT_MIN, 0, out, pos, INT_MIN.length);
                return pos + INT_MIN.length;
            }
            out[pos++] = '-';
            value = -value;
        }
        int end = pos + digits(value);
        int p = end;
        while (value >= 100) {
            int q = value / 100;
            int r = value - q * 100;
            out[--p] = ONES[r];
            out[--p] = TENS[r];
            value = q;
        }
        if (value >= 10) {
            out[--p] = ONES[value];
            out[--p] = TENS[value];
        } else {
            out[--p] = (byte) ('0' + value);
        }
        return end;
    }
}
