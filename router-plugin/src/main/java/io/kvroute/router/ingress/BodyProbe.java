package io.kvroute.router.ingress;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.policy.PromptExtras;

/**
 * Validation of the fields the router reads (model, stream, the shape of messages/prompt/text/input_ids,
 * the token budget and {@code n}) over the request's one parsed tree ({@link RequestJson#parse}); every
 * other field is left alone. Field order is the body's, so the first invalid field names the error.
 * A client number that is not an integer fitting a long (a fraction, a big integer) is a 400.
 */
final class BodyProbe {

    String model;
    /**
     * SGLang's {@code lora_path} naming one adapter of the base model in {@code model}, or null
     * (absent, null, or a per-prompt list of a batch: SGLang {@code python/sglang/srt/entrypoints/openai/protocol.py}).
     */
    String loraPath;
    boolean stream;
    /** -1 absent, else the number of messages. */
    int messageCount = -1;
    /** Set when a message is not an object with a string role. */
    String messageProblem;
    JsonToken prompt;
    JsonToken text;
    JsonToken inputIds;
    JsonToken samplingParams;
    /** Largest budget given in max_tokens / max_completion_tokens / sampling_params.max_new_tokens, -1 if none. */
    long tokenBudget = -1;
    /** Largest {@code n} given (top level or {@code sampling_params.n}), -1 if none; bounded by the caller. */
    long n = -1;
    /** A field only the router may set (engine priority, segment numbering) came from the client. */
    boolean routerOnlyField;
    /** The body names the engine's {@code priority} (vLLM, SGLang); dropped while tenants are on. */
    boolean enginePriorityField;
    /**
     * vLLM's {@code cache_salt} when the body gives a string, else null (absent, JSON null, or SGLang's
     * per-prompt list of a batch, sglang {@code python/sglang/srt/entrypoints/openai/protocol.py}).
     */
    String cacheSalt;
    /**
     * What vLLM folds into this request's block hashes that the router cannot compute
     * ({@link PromptExtras#MULTIMODAL}, {@link PromptExtras#PROMPT_EMBEDS}), or null.
     */
    String unhashable;
    /** {@code prompt_embeds} is given (not null): vLLM then needs no {@code prompt}. */
    boolean promptEmbeds;

    /** Parses {@code body} ({@link RequestJson#parse}) and probes it: for tests of the probe alone. */
    static BodyProbe parse(byte[] body) throws ApiException {
        return of(RequestJson.parse(body));
    }

    /** Validates and reads the router's fields of a parsed body, in the body's field order. */
    static BodyProbe of(ObjectNode root) throws ApiException {
        BodyProbe probe = new BodyProbe();
        var fields = root.fields();
        while (fields.hasNext()) {
            var field = fields.next();
            probe.field(field.getKey(), field.getValue());
        }
        return probe;
    }

    private void field(String name, JsonNode value) throws ApiException {
        switch (name) {
            case "model":
                if (value.isTextual()) {
                    model = value.textValue();
                } else if (!value.isNull()) {
                    throw new ApiException(400, "'model' must be a string");
                }
                break;
            case "stream":
                if (value.isBoolean()) {
                    stream = value.booleanValue();
                } else if (!value.isNull()) {
                    throw new ApiException(400, "'stream' must be a boolean");
                }
                break;
            case "messages":
                messages(value);
                break;
            case "prompt":
                prompt = value.asToken();
                break;
            case "text":
                text = value.asToken();
                break;
            case "input_ids":
                inputIds = value.asToken();
                break;
            case "max_tokens":
            case "max_completion_tokens":
                budget(name, value);
                break;
            case "n":
                sequences(name, value);
                break;
            case "priority":
                enginePriorityField = true;
                break;
            case "segment_index":
            case "high_priority_request":
            case "infer_high_priority":
                routerOnlyField = true; // stripped by the router before forwarding
                break;
            case "add_generation_prompt":
                // the router renders the chat itself, so a non-boolean must not silently mean true
                if (!value.isBoolean() && !value.isNull()) {
                    throw new ApiException(400, "'add_generation_prompt' must be a boolean");
                }
                break;
            case "stream_options":
                // the PD path rewrites it (include_usage), so its type is the router's business
                if (!value.isObject() && !value.isNull()) {
                    throw new ApiException(400, "'stream_options' must be an object");
                }
                break;
            case "sampling_params":
                samplingParams = value.asToken();
                if (value.isObject()) {
                    var inner = value.fields();
                    while (inner.hasNext()) {
                        var field = inner.next();
                        if (field.getKey().equals("max_new_tokens")) {
                            budget(field.getKey(), field.getValue());
                        } else if (field.getKey().equals("n")) {
                            sequences("sampling_params.n", field.getValue());
                        }
                    }
                }
                break;
            case "cache_salt":
                // vLLM refuses anything but a non-empty string (check_cache_salt_support, vllm
                // vllm/entrypoints/openai/chat_completion/protocol.py and completion/protocol.py); SGLang also
                // takes a list of strings. A number, boolean or object neither takes is refused here.
                if (value.isTextual()) {
                    // hashed as UTF-8 (CBOR, msgpack): a lone surrogate has no bytes vLLM could encode either
                    IngressTokenization.check(value, "cache_salt");
                    cacheSalt = value.textValue();
                } else if (!value.isNull() && !value.isArray()) {
                    throw new ApiException(400, "'cache_salt' must be a string (SGLang also takes a list of strings)");
                }
                break;
            case "prompt_embeds":
                // vLLM hashes each block's embeddings into its block hash (kv_cache_utils.py
                // _gen_prompt_embeds_extra_hash_keys): not computable from the request's tokens
                if (!value.isNull() && !(value.isArray() && value.isEmpty())) { // vLLM: an empty list is none
                    promptEmbeds = true;
                    unhashable = unhashable == null ? PromptExtras.PROMPT_EMBEDS : unhashable;
                }
                break;
            case "lora_path":
                // a batch's per-prompt list names no single adapter: route as the base
                if (value.isTextual()) {
                    loraPath = value.textValue();
                }
                break;
            default:
                break;
        }
    }

    private void messages(JsonNode value) {
        messageCount = 0;
        if (!value.isArray()) {
            messageProblem = "'messages' must be a non-empty array";
            return;
        }
        for (JsonNode element : value) {
            messageCount++;
            if (!element.isObject() || !element.path("role").isTextual()) {
                messageProblem = "each message must be an object with a string 'role'";
            }
            if (unhashable == null && hasNonTextPart(element.path("content"))) {
                unhashable = PromptExtras.MULTIMODAL;
            }
        }
    }

    /**
     * A content part other than text: an image, audio or video item, whose hash vLLM folds into the
     * blocks it overlaps (kv_cache_utils.py {@code _gen_mm_extra_hash_keys}).
     */
    private static boolean hasNonTextPart(JsonNode content) {
        if (!content.isArray()) {
            return false;
        }
        for (JsonNode part : content) {
            if (part.isObject() && part.path("type").isTextual() && !part.path("type").textValue().equals("text")) {
                return true;
            }
        }
        return false;
    }

    /** The request's {@link PromptExtras}, for the exact KV index. */
    PromptExtras extras() {
        return PromptExtras.of(cacheSalt, unhashable);
    }

    /** An integer the client wrote that fits a long (a big integer or a fraction does not). */
    private static boolean isLong(JsonNode value) {
        return value.isIntegralNumber() && !value.isBigInteger();
    }

    /** {@code n}: null or an integer of at least 1; the upper bound is a flag, checked by the caller. */
    private void sequences(String name, JsonNode value) throws ApiException {
        if (value.isNull()) {
            return;
        }
        if (!isLong(value)) {
            throw new ApiException(400, "'" + name + "' must be a positive integer");
        }
        long count = value.longValue();
        if (count < 1) {
            throw new ApiException(400, "'" + name + "' must be at least 1 (got " + count + ")");
        }
        n = Math.max(n, count);
    }

    private void budget(String name, JsonNode value) throws ApiException {
        if (value.isNull()) {
            return;
        }
        if (!isLong(value)) {
            throw new ApiException(400, "'" + name + "' must be an integer between 0 and " + Endpoint.MAX_TOKENS_LIMIT);
        }
        long budget = value.longValue();
        if (budget < 0 || budget > Endpoint.MAX_TOKENS_LIMIT) {
            throw new ApiException(400, "'" + name + "' must be between 0 and " + Endpoint.MAX_TOKENS_LIMIT + " (got " + budget + ")");
        }
        tokenBudget = Math.max(tokenBudget, budget);
    }
}
