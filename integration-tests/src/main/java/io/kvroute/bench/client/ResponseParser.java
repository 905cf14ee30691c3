package io.kvroute.bench.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Incremental parser of one OpenAI chat-completions response body, streaming (SSE lines
 * {@code data: {...}} ending with {@code data: [DONE]}) or plain JSON. It times the first and last
 * content chunk, counts output tokens and reads {@code usage}.
 *
 * <p>Bytes are split into lines before decoding, so a UTF-8 character or an event split across
 * network chunks is handled. Each content chunk counts as one token unless {@code usage} reports
 * {@code completion_tokens}. Not thread-safe: Jetty delivers one response's content serially.
 */
final class ResponseParser {

    /** Caps the buffered plain-JSON body (a completion here is a few kB). */
    private static final int MAX_PLAIN_BODY_BYTES = 8 << 20;

    private final ObjectMapper json;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private final ByteArrayOutputStream plainBody = new ByteArrayOutputStream();
    private final boolean streaming;
    private boolean done;
    private long firstTokenNanos = -1;
    private long lastTokenNanos = -1;
    private long contentChunks;
    private long completionTokens = -1;
    private long promptTokens;
    private long cachedTokens;
    private String error;

    ResponseParser(ObjectMapper json, boolean streaming) {
        this.json = json;
        this.streaming = streaming;
    }

    void onContent(ByteBuffer buffer, long nowNanos) {
        if (!streaming) {
            if (plainBody.size() + buffer.remaining() <= MAX_PLAIN_BODY_BYTES) {
                byte[] bytes = new byte[buffer.remaining()];
                buffer.get(bytes);
                plainBody.writeBytes(bytes);
            } else {
                buffer.position(buffer.limit());
                error = "response body over " + MAX_PLAIN_BODY_BYTES + " bytes";
            }
            return;
        }
        while (buffer.hasRemaining()) {
            byte b = buffer.get();
            if (b == '\n') {
                onLine(line.toString(StandardCharsets.UTF_8), nowNanos);
                line.reset();
            } else if (b != '\r') {
                line.write(b);
            }
        }
    }

    /** Call once when the body ended; a plain JSON body is parsed here. */
    void onEnd(long nowNanos) {
        if (streaming) {
            if (line.size() > 0) {
                onLine(line.toString(StandardCharsets.UTF_8), nowNanos);
                line.reset();
            }
            if (!done && error == null) {
                error = "stream ended without data: [DONE]";
            }
            return;
        }
        if (plainBody.size() == 0) {
            return;
        }
        try {
            JsonNode root = json.readTree(plainBody.toByteArray());
            readError(root);
            JsonNode choices = root.path("choices");
            for (JsonNode choice : choices) {
                String text = choice.path("message").path("content").asText(choice.path("text").asText(""));
                if (!text.isEmpty()) {
                    contentChunks++;
                    if (firstTokenNanos < 0) {
                        firstTokenNanos = nowNanos;
                    }
                    lastTokenNanos = nowNanos;
                }
            }
            readUsage(root.path("usage"));
        } catch (Exception e) {
            if (error == null) {
                error = "unparseable JSON body: " + e.getMessage();
            }
        }
    }

    private void onLine(String text, long nowNanos) {
        if (!text.startsWith("data:")) {
            return; // comments (": ping"), event:/id: fields and blank separators
        }
        String data = text.substring(5).strip();
        if (data.equals("[DONE]")) {
            done = true;
            return;
        }
        if (data.isEmpty()) {
            return;
        }
        try {
            JsonNode chunk = json.readTree(data);
            readError(chunk);
            for (JsonNode choice : chunk.path("choices")) {
                JsonNode delta = choice.path("delta");
                String content = delta.path("content").asText("");
                String reasoning = delta.path("reasoning_content").asText("");
                String text2 = choice.path("text").asText("");
                if (!content.isEmpty() || !reasoning.isEmpty() || !text2.isEmpty()) {
                    contentChunks++;
                    if (firstTokenNanos < 0) {
                        firstTokenNanos = nowNanos;
                    }
                    lastTokenNanos = nowNanos;
                }
            }
            readUsage(chunk.path("usage"));
            readGenerateEvent(chunk, nowNanos);
        } catch (Exception e) {
            if (error == null) {
                error = "unparseable SSE chunk: " + e.getMessage();
            }
        }
    }

    /**
     * An SGLang {@code /generate} stream event: each token's event carries {@code output_ids}, and
     * {@code meta_info} holds {@code completion_tokens}, then on the last event {@code prompt_tokens} and
     * {@code cached_tokens} (SGLang {@code python/sglang/srt/managers/tokenizer_manager.py}).
     */
    private void readGenerateEvent(JsonNode chunk, long nowNanos) {
        JsonNode meta = chunk.path("meta_info");
        if (!meta.isObject()) {
            return;
        }
        if (chunk.path("output_ids").size() > 0) {
            contentChunks++;
            if (firstTokenNanos < 0) {
                firstTokenNanos = nowNanos;
            }
            lastTokenNanos = nowNanos;
        }
        if (meta.has("completion_tokens")) {
            completionTokens = meta.path("completion_tokens").asLong();
        }
        promptTokens = meta.path("prompt_tokens").asLong(promptTokens);
        cachedTokens = meta.path("cached_tokens").asLong(cachedTokens);
    }

    private void readError(JsonNode root) {
        JsonNode err = root.path("error");
        if (!err.isMissingNode() && !err.isNull() && error == null) {
            error = "error in body: " + err.path("message").asText(err.toString());
        }
    }

    private void readUsage(JsonNode usage) {
        if (!usage.isObject()) {
            return;
        }
        if (usage.has("completion_tokens")) {
            completionTokens = usage.path("completion_tokens").asLong();
        }
        promptTokens = usage.path("prompt_tokens").asLong(promptTokens);
        cachedTokens = usage.path("prompt_tokens_details").path("cached_tokens").asLong(cachedTokens);
    }

    long firstTokenNanos() {
        return firstTokenNanos;
    }

    long lastTokenNanos() {
        return lastTokenNanos;
    }

    long outputTokens() {
        return completionTokens >= 0 ? completionTokens : contentChunks;
    }

    long promptTokens() {
        return promptTokens;
    }

    long cachedTokens() {
        return cachedTokens;
    }

    String error() {
        return error;
    }
}
