package io.kvroute.mock.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.mock.http.Replies.BadRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the fields of a generation body the engine needs, in the shapes of both API families:
 * OpenAI's {@code /v1/chat/completions} and {@code /v1/completions} ({@code messages},
 * {@code prompt}, {@code max_tokens} / {@code max_completion_tokens}) and SGLang's native
 * {@code /generate} ({@code text}, {@code sampling_params.max_new_tokens}); {@code input_ids} wins
 * over text in every family, as in SGLang. Bad values are a {@link BadRequest}. Stateless.
 */
final class RequestBodies {

    static final int DEFAULT_MAX_TOKENS = 16;
    /** Largest token budget accepted; output ids are buffered per request, so an int-sized budget would not fit in memory. */
    static final int MAX_TOKENS_LIMIT = 1_000_000;

    private RequestBodies() {}

    static int[] inputIds(ApiKind kind, JsonNode body, PromptEncoder encoder) {
        JsonNode ids = body.get("input_ids");
        if (ids != null && !ids.isNull()) {
            if (!ids.isArray()) {
                throw new BadRequest("'input_ids' must be an array of integers");
            }
            int[] out = new int[ids.size()];
            for (int i = 0; i < out.length; i++) {
                if (!ids.get(i).canConvertToInt()) {
                    throw new BadRequest("'input_ids' must be an array of integers");
                }
                out[i] = ids.get(i).asInt();
            }
            return out;
        }
        switch (kind) {
            case CHAT:
                if (!body.path("messages").isArray() || body.get("messages").isEmpty()) {
                    throw new BadRequest("'messages' must be a non-empty array");
                }
                return encoder.encodeChat(body);
            case COMPLETIONS:
                int[] promptIds = promptTokenIds(body.get("prompt"));
                return promptIds != null ? promptIds : encoder.encodePrompt(joinText(body.get("prompt"), "prompt"), body);
            default:
                return encoder.encodePrompt(joinText(body.get("text"), "text"), body);
        }
    }

    /**
     * A completion prompt of token ids, run as given (no special tokens, nothing tokenized), or null when the
     * prompt is text. vLLM's {@code parse_and_batch_prompt} (vllm/inputs/parse.py): a list of integers is one
     * tokens prompt, a list of lists one tokens prompt each. This mock serves one sequence per request, so a
     * batch of token prompts is run as their concatenation, as a batch of text prompts is joined
     * ({@link #joinText}); both engines would run each element as its own request.
     */
    static int[] promptTokenIds(JsonNode prompt) {
        if (prompt == null || !prompt.isArray() || prompt.isEmpty() || !(prompt.get(0).isNumber() || prompt.get(0).isArray())) {
            return null;
        }
        List<Integer> ids = new ArrayList<>();
        for (JsonNode element : prompt) {
            if (element.isArray()) {
                element.forEach(id -> ids.add(tokenId(id)));
            } else {
                ids.add(tokenId(element));
            }
        }
        if (ids.isEmpty()) {
            throw new BadRequest("please provide at least one prompt");
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int tokenId(JsonNode id) {
        if (!id.isIntegralNumber() || !id.canConvertToInt()) {
            throw new BadRequest("'prompt' must be a string, an array of strings, an array of integers or an array of integer arrays");
        }
        return id.asInt();
    }

    static String joinText(JsonNode text, String field) {
        if (text == null || text.isNull()) {
            throw new BadRequest("'" + field + "' is required");
        }
        if (text.isTextual()) {
            return text.asText();
        }
        if (text.isArray()) {
            StringBuilder joined = new StringBuilder();
            for (JsonNode part : text) {
                if (joined.length() > 0) {
                    joined.append('\n');
                }
                joined.append(part.asText());
            }
            return joined.toString();
        }
        throw new BadRequest("'" + field + "' must be a string or an array of strings");
    }

    static int maxTokens(ApiKind kind, JsonNode body) {
        JsonNode value = kind == ApiKind.GENERATE
                ? body.path("sampling_params").get("max_new_tokens")
                : body.hasNonNull("max_completion_tokens") ? body.get("max_completion_tokens") : body.get("max_tokens");
        if (value == null || value.isNull()) {
            return DEFAULT_MAX_TOKENS;
        }
        if (!value.canConvertToInt() || value.asInt() < 0) {
            throw new BadRequest("the token budget must be a non-negative integer");
        }
        if (value.asInt() > MAX_TOKENS_LIMIT) {
            throw new BadRequest("the token budget must be at most " + MAX_TOKENS_LIMIT + " (got " + value.asInt() + ")");
        }
        return Math.max(1, value.asInt());
    }

    /**
     * The request's {@code priority} field (vLLM and SGLang, an integer; absent or null is 0). A value
     * that is not a 32-bit integer is a {@link BadRequest}, as both engines' request models reject it.
     */
    static int priority(JsonNode body) {
        JsonNode value = body.get("priority");
        if (value == null || value.isNull()) {
            return 0;
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt()) {
            throw new BadRequest("'priority' must be an integer");
        }
        return value.asInt();
    }

    /** SGLang's PD {@code bootstrap_room}: one integer or an array of them (one per sequence). */
    static List<Long> rooms(JsonNode room) {
        List<Long> rooms = new ArrayList<>();
        if (room == null || room.isNull()) {
            return rooms;
        }
        if (room.isArray()) {
            room.forEach(r -> rooms.add(r.asLong()));
        } else if (room.canConvertToLong()) {
            rooms.add(room.asLong());
        } else {
            throw new BadRequest("'bootstrap_room' must be an integer or an array of integers");
        }
        return rooms;
    }
}
