package io.kvroute.router.pd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.kvroute.router.json.JsonFields;

/**
 * Builds the body of a PD continuation segment (LightLLM PD master): when a decode node ends a
 * segment for lack of KV, the rest of the generation is re-dispatched to the same pair with the
 * prompt extended by the text generated so far, the remaining token budget, the next
 * {@code segment_index} and {@code high_priority_request = true} (the engine then gives it
 * inference priority). Forwarded {@code input_ids} and the old rendezvous are dropped: the prompt
 * changed, and a new room is injected per segment.
 *
 * <p>Every segment's prompt is exactly the original prompt plus all text generated so far, built
 * from the original body each time. Chat: the generated text becomes a trailing assistant message
 * continued in place ({@code continue_final_message: true}, no new generation prompt); when the
 * client itself asked to continue its trailing assistant message, the text is appended to that
 * message. Completions: appended to {@code prompt} (a string or a one-string array). SGLang
 * {@code /generate}: appended to {@code text}. Shapes with no exact text continuation (token-id
 * prompts, batches) are not continued: see {@link #supports}.
 */
public final class Continuation {

    /** The marker a decode node sets on the event or body that ends a segment for lack of KV. */
    public static final String CAPACITY_MARKER = "kvroute_capacity_marker";

    private Continuation() {}

    /**
     * @param original the first segment's body (never modified)
     * @param path the endpoint path
     * @param generatedText all text generated so far, across segments
     * @param remainingTokens the budget left, at least 1
     * @param segmentIndex the new segment's index, at least 1
     */
    public static ObjectNode next(ObjectNode original, String path, String generatedText, int remainingTokens,
            int segmentIndex) {
        if (!supports(original, path)) {
            throw new IllegalArgumentException("no exact continuation for this request shape on " + path);
        }
        ObjectNode body = original.deepCopy();
        body.remove("input_ids");
        body.remove("bootstrap_host");
        body.remove("bootstrap_port");
        body.remove("bootstrap_room");
        switch (path) {
            case "/v1/chat/completions": {
                // Always rebuilt from the original: the client's own messages are never touched, the
                // text generated so far is one assistant message continued in place.
                ArrayNode messages = (ArrayNode) body.get("messages");
                int lastIndex = messages.size() - 1;
                JsonNode last = messages.get(lastIndex);
                if (continuesLastMessage(original)) {
                    ((ObjectNode) last).put("content", last.get("content").textValue() + generatedText);
                } else {
                    messages.addObject().put("role", "assistant").put("content", generatedText);
                }
                body.put("continue_final_message", true);
                body.put("add_generation_prompt", false);
                body.remove("max_completion_tokens");
                body.put("max_tokens", remainingTokens);
                break;
            }
            case "/v1/completions":
                body.set("prompt", extended(original.get("prompt"), generatedText));
                body.put("max_tokens", remainingTokens);
                break;
            default: {
                body.set("text", extended(original.get("text"), generatedText));
                ObjectNode sampling = JsonFields.writableObject(body, "sampling_params");
                if (sampling == null) {
                    sampling = body.putObject("sampling_params");
                }
                sampling.put("max_new_tokens", remainingTokens);
                break;
            }
        }
        body.put("segment_index", segmentIndex);
        body.put("high_priority_request", true);
        return body;
    }

    /**
     * True when a continuation of this request can be built exactly (prompt + generated text): one
     * sequence (no {@code n} above 1, no batch), and a text prompt: a chat, a {@code prompt}/{@code text}
     * string or a one-string array. Token-id prompts ({@code input_ids}, a completions prompt of ids)
     * and batches are not continued: their segment end is the end of the response.
     */
    public static boolean supports(JsonNode body, String path) {
        JsonNode n = JsonFields.optional(body, "n");
        // a chat's input_ids are the router's own forwarded rendering (or ignored caller ids): dropped, the
        // messages are the prompt; elsewhere input_ids are the caller's token prompt, with no text to extend
        if (n != null && n.asInt(1) > 1 || (!path.equals("/v1/chat/completions") && JsonFields.present(body, "input_ids"))) {
            return false;
        }
        switch (path) {
            case "/v1/chat/completions": {
                JsonNode messages = JsonFields.optional(body, "messages");
                return messages != null && messages.isArray() && !messages.isEmpty()
                        && (!continuesLastMessage(body) || messages.get(messages.size() - 1).path("content").isTextual());
            }
            case "/v1/completions":
                return singleText(JsonFields.optional(body, "prompt"));
            default:
                return singleText(JsonFields.optional(body, "text"));
        }
    }

    /** The client asked the engine to continue its own trailing assistant message. */
    private static boolean continuesLastMessage(JsonNode body) {
        JsonNode messages = body.path("messages");
        JsonNode last = messages.path(messages.size() - 1);
        return body.path("continue_final_message").asBoolean(false) && last.path("role").asText("").equals("assistant");
    }

    private static boolean singleText(JsonNode prompt) {
        return prompt != null && (prompt.isTextual() || (prompt.isArray() && prompt.size() == 1 && prompt.get(0).isTextual()));
    }

    /** A string prompt, or a one-string array, with the generated text appended (same shape). */
    private static JsonNode extended(JsonNode prompt, String generatedText) {
        if (prompt.isTextual()) {
            return TextNode.valueOf(prompt.textValue() + generatedText);
        }
        ArrayNode single = JsonNodeFactory.instance.arrayNode();
        single.add(prompt.get(0).textValue() + generatedText);
        return single;
    }

    /** The output budget a body asks for, or {@code defaultTokens} when it names none. */
    public static int requestedTokens(JsonNode body, String path, int defaultTokens) {
        JsonNode value = path.equals("/generate") ? body.path("sampling_params").get("max_new_tokens")
                : body.hasNonNull("max_completion_tokens") ? body.get("max_completion_tokens") : body.get("max_tokens");
        return value != null && value.canConvertToInt() ? value.asInt() : defaultTokens;
    }
}
