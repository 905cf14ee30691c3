package io.kvroute.router.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * The cheap path: one pass of Jackson's streaming parser over the body that validates and keeps
 * only the fields the router reads (model, stream, the shape of messages/prompt/text/input_ids and
 * the token budget), skipping every other value without building a tree. A 1 MiB chat body is
 * validated without allocating its content; the full tree is parsed only when a request needs
 * tokens (a chat on a model with a chat encoder, or a token-hungry policy) or a body rewrite.
 *
 * <p>Malformed JSON, trailing garbage, invalid UTF-8 and nesting beyond Jackson's limit all end
 * in a 400 {@link ApiException}.
 */
final class BodyProbe {

    private static final JsonFactory FACTORY = new JsonFactory();

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

    static BodyProbe parse(byte[] body) throws ApiException {
        BodyProbe probe = new BodyProbe();
        try (JsonParser parser = FACTORY.createParser(body)) {
            JsonToken first = parser.nextToken();
            if (first != JsonToken.START_OBJECT) {
                if (first == null) {
                    throw new ApiException(400, "invalid JSON body: empty");
                }
                parser.skipChildren();
                if (parser.nextToken() != null) {
                    throw new ApiException(400, "invalid JSON body: trailing content");
                }
                throw new ApiException(400, "the request body must be a JSON object");
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                probe.field(name, value, parser);
            }
            if (parser.nextToken() != null) {
                throw new ApiException(400, "invalid JSON body: trailing content after the object");
            }
        } catch (IOException e) {
            String detail = e instanceof com.fasterxml.jackson.core.JsonProcessingException jpe ? jpe.getOriginalMessage() : e.getMessage();
            throw new ApiException(400, "invalid JSON body: " + detail);
        }
        return probe;
    }

    private void field(String name, JsonToken value, JsonParser parser) throws IOException, ApiException {
        switch (name) {
            case "model":
                if (value == JsonToken.VALUE_STRING) {
                    model = parser.getText();
                } else if (value != JsonToken.VALUE_NULL) {
                    throw new ApiException(400, "'model' must be a string");
                }
                break;
            case "stream":
                if (value == JsonToken.VALUE_TRUE || value == JsonToken.VALUE_FALSE) {
                    stream = value == JsonToken.VALUE_TRUE;
                } else if (value != JsonToken.VALUE_NULL) {
                    throw new ApiException(400, "'stream' must be a boolean");
                }
                break;
            case "messages":
                messages(value, parser);
                break;
            case "prompt":
                prompt = value;
                parser.skipChildren();
                break;
            case "text":
                text = value;
                parser.skipChildren();
                break;
            case "input_ids":
                inputIds = value;
                parser.skipChildren();
                break;
            case "max_tokens":
            case "max_completion_tokens":
                budget(name, value, parser);
                break;
            case "n":
                sequences(name, value, parser);
                break;
            case "segment_index":
            case "high_priority_request":
            case "infer_high_priority":
                routerOnlyField = true; // stripped by the router before forwarding
                parser.skipChildren();
                break;
            case "add_generation_prompt":
                // the router renders the chat itself, so a non-boolean must not silently mean true
                if (value != JsonToken.VALUE_TRUE && value != JsonToken.VALUE_FALSE && value != JsonToken.VALUE_NULL) {
                    parser.skipChildren();
                    throw new ApiException(400, "'add_generation_prompt' must be a boolean");
                }
                break;
            case "stream_options":
                // the PD path rewrites it (include_usage), so its type is the router's business
                if (value != JsonToken.START_OBJECT && value != JsonToken.VALUE_NULL) {
                    parser.skipChildren();
                    throw new ApiException(400, "'stream_options' must be an object");
                }
                parser.skipChildren();
                break;
            case "sampling_params":
                samplingParams = value;
                if (value == JsonToken.START_OBJECT) {
                    while (parser.nextToken() == JsonToken.FIELD_NAME) {
                        String inner = parser.currentName();
                        JsonToken innerValue = parser.nextToken();
                        if (inner.equals("max_new_tokens")) {
                            budget(inner, innerValue, parser);
                        } else if (inner.equals("n")) {
                            sequences("sampling_params.n", innerValue, parser);
                        } else {
                            parser.skipChildren();
                        }
                    }
                } else {
                    parser.skipChildren();
                }
                break;
            case "lora_path":
                if (value == JsonToken.VALUE_STRING) {
                    loraPath = parser.getText();
                } else {
                    parser.skipChildren(); // a batch's per-prompt list names no single adapter: route as the base
                }
                break;
            default:
                parser.skipChildren();
        }
    }

    private void messages(JsonToken value, JsonParser parser) throws IOException {
        if (value != JsonToken.START_ARRAY) {
            messageCount = 0;
            messageProblem = "'messages' must be a non-empty array";
            parser.skipChildren();
            return;
        }
        messageCount = 0;
        JsonToken element;
        while ((element = parser.nextToken()) != JsonToken.END_ARRAY) {
            messageCount++;
            if (element != JsonToken.START_OBJECT) {
                messageProblem = "each message must be an object with a string 'role'";
                parser.skipChildren();
                continue;
            }
            boolean hasRole = false;
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken fieldValue = parser.nextToken();
                if (name.equals("role") && fieldValue == JsonToken.VALUE_STRING) {
                    hasRole = true;
                }
                parser.skipChildren();
            }
            if (!hasRole) {
                messageProblem = "each message must be an object with a string 'role'";
            }
        }
    }

    /** {@code n}: null or an integer of at least 1; the upper bound is a flag, checked by the caller. */
    private void sequences(String name, JsonToken value, JsonParser parser) throws IOException, ApiException {
        if (value == JsonToken.VALUE_NULL) {
            return;
        }
        if (value != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            parser.skipChildren();
            throw new ApiException(400, "'" + name + "' must be a positive integer");
        }
        long count = parser.getLongValue();
        if (count < 1) {
            throw new ApiException(400, "'" + name + "' must be at least 1 (got " + count + ")");
        }
        n = Math.max(n, count);
    }

    private void budget(String name, JsonToken value, JsonParser parser) throws IOException, ApiException {
        if (value == JsonToken.VALUE_NULL) {
            return;
        }
        if (value != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            parser.skipChildren();
            throw new ApiException(400, "'" + name + "' must be an integer between 0 and " + Endpoint.MAX_TOKENS_LIMIT);
        }
        long budget = parser.getLongValue();
        if (budget < 0 || budget > Endpoint.MAX_TOKENS_LIMIT) {
            throw new ApiException(400, "'" + name + "' must be between 0 and " + Endpoint.MAX_TOKENS_LIMIT + " (got " + budget + ")");
        }
        tokenBudget = Math.max(tokenBudget, budget);
    }
}
