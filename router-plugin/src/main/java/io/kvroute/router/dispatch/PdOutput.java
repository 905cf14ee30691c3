package io.kvroute.router.dispatch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.pd.Continuation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Stitches the decode side's output across PD continuation segments into one seamless response:
 * no duplicated or lost tokens, usage summed over segments, the capacity marker and every
 * intermediate end-of-stream hidden from the client.
 *
 * <p>Streaming: SSE events are split at blank lines (a UTF-8 multi-byte sequence never contains
 * {@code \n}, so splitting raw bytes is safe), each event is inspected and either passed through,
 * rewritten (SGLang's cumulative {@code text} and counters are offset by earlier segments) or held
 * back ({@code [DONE]}, usage chunks, the marked finish event). Non-streaming: each segment's body
 * is parsed and the final one carries the concatenated output and the summed usage.
 *
 * <p>Not thread-safe: one decode response is processed at a time, in order.
 */
final class PdOutput {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private final ApiKind endpoint;
    private final boolean clientWantsUsage;
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
    private final StringBuilder generated = new StringBuilder();

    private int generatedTokens;
    private int segmentTokens;
    private int segmentChunks;
    private long promptTokens = -1;
    private long cachedTokens;
    private boolean segmentCapacityEnd;
    private boolean sawError;
    private String segmentTextBase = "";

    PdOutput(ApiKind endpoint, boolean clientWantsUsage) {
        this.endpoint = endpoint;
        this.clientWantsUsage = clientWantsUsage;
    }

    /** Called when a new decode segment starts. */
    void beginSegment() {
        pending.reset();
        segmentCapacityEnd = false;
        segmentTokens = -1;
        segmentChunks = 0;
        segmentTextBase = generated.toString();
    }

    /** True when the segment that just ended asked for a continuation. */
    boolean segmentEndedForCapacity() {
        return segmentCapacityEnd && !sawError;
    }

    /** Closes the segment's token accounting; returns the tokens it generated. */
    int endSegment() {
        int tokens = segmentTokens >= 0 ? segmentTokens : segmentChunks;
        generatedTokens += tokens;
        return tokens;
    }

    String generatedText() {
        return generated.toString();
    }

    int generatedTokens() {
        return generatedTokens;
    }

    /** Streaming: feeds decode bytes, returns what the client should see now (possibly empty). */
    byte[] onStreamBytes(byte[] bytes) {
        pending.write(bytes, 0, bytes.length);
        byte[] all = pending.toByteArray();
        int start = 0;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i + 1 < all.length; i++) {
            if (all[i] == '\n' && all[i + 1] == '\n') {
                String event = new String(all, start, i - start, StandardCharsets.UTF_8);
                byte[] emitted = transform(event);
                out.write(emitted, 0, emitted.length);
                start = i + 2;
                i++;
            }
        }
        pending.reset();
        pending.write(all, start, all.length - start);
        return out.toByteArray();
    }

    /** Streaming: what ends the whole response: the summed usage (if asked for) and {@code [DONE]}. */
    byte[] streamTrailer(String model) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (clientWantsUsage && endpoint != ApiKind.GENERATE) {
            ObjectNode usageEvent = JSON.createObjectNode();
            usageEvent.put("object", endpoint == ApiKind.CHAT ? "chat.completion.chunk" : "text_completion");
            if (model != null) {
                usageEvent.put("model", model);
            }
            usageEvent.putArray("choices");
            usageEvent.set("usage", usage());
            byte[] event = ("data: " + usageEvent + "\n\n").getBytes(StandardCharsets.UTF_8);
            out.write(event, 0, event.length);
        }
        out.write(DONE, 0, DONE.length);
        return out.toByteArray();
    }

    private byte[] transform(String event) {
        if (!event.startsWith("data: ")) {
            return (event + "\n\n").getBytes(StandardCharsets.UTF_8);
        }
        String data = event.substring(6).trim();
        if (data.equals("[DONE]")) {
            return new byte[0];
        }
        JsonNode node;
        try {
            node = JSON.readTree(data);
        } catch (IOException e) {
            return (event + "\n\n").getBytes(StandardCharsets.UTF_8);
        }
        if (node == null || !node.isObject()) {
            return (event + "\n\n").getBytes(StandardCharsets.UTF_8);
        }
        ObjectNode object = (ObjectNode) node;
        if (object.has("error")) {
            sawError = true;
            return (event + "\n\n").getBytes(StandardCharsets.UTF_8);
        }
        boolean marker = object.path(Continuation.CAPACITY_MARKER).asBoolean(false);
        if (marker) {
            segmentCapacityEnd = true;
        }
        if (endpoint == ApiKind.GENERATE) {
            return transformGenerate(object, marker);
        }
        JsonNode usage = object.get("usage");
        if (usage != null && usage.isObject()) {
            addUsage(usage);
        }
        JsonNode choices = object.path("choices");
        if (choices.isArray() && choices.isEmpty()) {
            return new byte[0]; // a usage chunk: re-emitted summed at the very end
        }
        JsonNode choice = choices.path(0);
        String piece = endpoint == ApiKind.CHAT ? choice.path("delta").path("content").asText("") : choice.path("text").asText("");
        if (!piece.isEmpty()) {
            generated.append(piece);
            segmentChunks++;
        }
        if (marker) {
            return new byte[0];
        }
        object.remove("usage");
        return ("data: " + object + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    private byte[] transformGenerate(ObjectNode object, boolean marker) {
        String cumulative = object.path("text").asText("");
        String segmentText = cumulative;
        if (segmentText.length() > generated.length() - segmentTextBase.length()) {
            generated.setLength(segmentTextBase.length());
            generated.append(segmentText);
        }
        JsonNode meta = object.path("meta_info");
        if (meta.isObject()) {
            int completion = meta.path("completion_tokens").asInt(-1);
            if (completion >= 0) {
                segmentTokens = completion;
            }
            if (meta.hasNonNull("finish_reason") && meta.has("prompt_tokens")) {
                addUsage(meta);
            }
            ((ObjectNode) meta).put("completion_tokens", generatedTokens + Math.max(0, segmentTokens));
            if (meta.has("prompt_tokens") && promptTokens >= 0) {
                ((ObjectNode) meta).put("prompt_tokens", promptTokens);
            }
        }
        if (marker) {
            return new byte[0];
        }
        object.put("text", segmentTextBase + segmentText);
        return ("data: " + object + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    private void addUsage(JsonNode usage) {
        if (promptTokens < 0) {
            promptTokens = usage.path("prompt_tokens").asLong(0);
        }
        segmentTokens = usage.path("completion_tokens").asInt(segmentTokens);
        cachedTokens += usage.has("prompt_tokens_details")
                ? usage.path("prompt_tokens_details").path("cached_tokens").asLong(0)
                : usage.path("cached_tokens").asLong(0);
    }

    private ObjectNode usage() {
        ObjectNode usage = JSON.createObjectNode();
        long prompt = Math.max(0, promptTokens);
        usage.put("prompt_tokens", prompt);
        usage.put("completion_tokens", generatedTokens);
        usage.put("total_tokens", prompt + generatedTokens);
        usage.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
        return usage;
    }

    /** Non-streaming: the final body when the last segment itself ended with the marker at the budget. */
    byte[] finalWholeBody() {
        ObjectNode object = JSON.createObjectNode();
        if (endpoint == ApiKind.GENERATE) {
            object.put("text", generated.toString());
            ObjectNode meta = object.putObject("meta_info");
            meta.put("prompt_tokens", Math.max(0, promptTokens));
            meta.put("completion_tokens", generatedTokens);
            meta.put("cached_tokens", cachedTokens);
            meta.putObject("finish_reason").put("type", "length");
        } else {
            object.put("object", endpoint == ApiKind.CHAT ? "chat.completion" : "text_completion");
            ObjectNode choice = object.putArray("choices").addObject();
            choice.put("index", 0);
            if (endpoint == ApiKind.CHAT) {
                choice.putObject("message").put("role", "assistant").put("content", generated.toString());
            } else {
                choice.put("text", generated.toString());
            }
            choice.put("finish_reason", "length");
            object.set("usage", usage());
        }
        return object.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Non-streaming: accounts one segment's whole body. Returns the body to send when this was the
     * last segment, null when a continuation is due.
     */
    byte[] onWholeBody(byte[] body) throws IOException {
        JsonNode node = JSON.readTree(body);
        if (node == null || !node.isObject()) {
            return body;
        }
        ObjectNode object = (ObjectNode) node;
        boolean marker = object.path(Continuation.CAPACITY_MARKER).asBoolean(false);
        segmentCapacityEnd = marker;
        String piece;
        if (endpoint == ApiKind.GENERATE) {
            piece = object.path("text").asText("");
            addUsage(object.path("meta_info"));
        } else {
            JsonNode choice = object.path("choices").path(0);
            piece = endpoint == ApiKind.CHAT ? choice.path("message").path("content").asText("") : choice.path("text").asText("");
            addUsage(object.path("usage"));
        }
        generated.append(piece);
        if (marker) {
            return null;
        }
        int total = generatedTokens + Math.max(0, segmentTokens);
        object.remove(Continuation.CAPACITY_MARKER);
        if (endpoint == ApiKind.GENERATE) {
            object.put("text", generated.toString());
            ObjectNode meta = object.has("meta_info") ? (ObjectNode) object.get("meta_info") : object.putObject("meta_info");
            meta.put("completion_tokens", total);
            meta.put("prompt_tokens", Math.max(0, promptTokens));
            meta.put("cached_tokens", cachedTokens);
        } else {
            ObjectNode choice = (ObjectNode) object.withArray("choices").get(0);
            if (endpoint == ApiKind.CHAT) {
                ((ObjectNode) choice.with("message")).put("content", generated.toString());
            } else {
                choice.put("text", generated.toString());
            }
            generatedTokens = total;
            segmentTokens = 0;
            object.set("usage", usage());
        }
        return object.toString().getBytes(StandardCharsets.UTF_8);
    }
}
