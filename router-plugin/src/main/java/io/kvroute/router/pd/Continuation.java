package io.kvroute.router.pd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.json.JsonFields;

/**
 * Builds the body of a PD continuation segment (LightLLM PD master): when a decode node ends a
 * segment for lack of KV, the rest of the generation is re-dispatched to the same pair with the
 * prompt extended by the text generated so far, the remaining token budget, the next
 * {@code segment_index} and {@code high_priority_request = true} (the engine then gives it
 * inference priority). Forwarded {@code input_ids} and the old rendezvous are dropped: the prompt
 * changed, and a new room is injected per segment.
 *
 * <p>Chat: the generated text becomes a trailing assistant message continued in place
 * ({@code continue_final_message: true}, no new generation prompt). Completions: appended to
 * {@code prompt}. SGLang {@code /generate}: appended to {@code text}.
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
        ObjectNode body = original.deepCopy();
        body.remove("input_ids");
        body.remove("bootstrap_host");
        body.remove("bootstrap_port");
        body.remove("bootstrap_room");
        switch (path) {
            case "/v1/chat/completions": {
                ArrayNode messages = (ArrayNode) body.get("messages");
                JsonNode last = messages.get(messages.size() - 1);
                if (segmentIndex > 1 && last.path("role").asText().equals("assistant")) {
                    messages.remove(messages.size() - 1);
                }
                messages.addObject().put("role", "assistant").put("content", generatedText);
                body.put("continue_final_message", true);
                body.put("add_generation_prompt", false);
                body.remove("max_completion_tokens");
                body.put("max_tokens", remainingTokens);
                break;
            }
            case "/v1/completions":
                body.put("prompt", original.path("prompt").asText() + generatedText);
                body.put("max_tokens", remainingTokens);
                break;
            default: {
                body.put("text", original.path("text").asText() + generatedText);
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

    /** The output budget a body asks for, or {@code defaultTokens} when it names none. */
    public static int requestedTokens(JsonNode body, String path, int defaultTokens) {
        JsonNode value = path.equals("/generate") ? body.path("sampling_params").get("max_new_tokens")
                : body.hasNonNull("max_completion_tokens") ? body.get("max_completion_tokens") : body.get("max_tokens");
        return value != null && value.canConvertToInt() ? value.asInt() : defaultTokens;
    }
}
