package io.kvroute.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;

/** Reads OpenAI-style SSE bodies in tests. */
final class SseText {

    private static final ObjectMapper JSON = new ObjectMapper();

    private SseText() {}

    /** The concatenated delta content (chat) or text (completions) of every chunk. */
    static String content(String sse) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String line : sse.split("\n")) {
            if (!line.startsWith("data: {")) {
                continue;
            }
            JsonNode event = JSON.readTree(line.substring(6));
            JsonNode choice = event.path("choices").path(0);
            if (choice.path("delta").has("content")) {
                out.append(choice.path("delta").path("content").asText());
            } else if (choice.has("text")) {
                out.append(choice.path("text").asText());
            }
        }
        return out.toString();
    }

    /** The last usage object in the stream. */
    static JsonNode usage(String sse) throws Exception {
        JsonNode usage = MissingNode.getInstance();
        for (String line : sse.split("\n")) {
            if (line.startsWith("data: {")) {
                JsonNode event = JSON.readTree(line.substring(6));
                if (event.hasNonNull("usage")) {
                    usage = event.get("usage");
                }
            }
        }
        return usage;
    }
}
