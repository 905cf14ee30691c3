package io.kvroute.mock.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.mock.engine.TokenSink;

/**
 * Builds response bodies and SSE events in the OpenAI (chat, completions) and SGLang
 * ({@code /generate}) shapes, including {@code usage.prompt_tokens_details.cached_tokens}.
 */
final class OutputFormatter {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ApiKind kind;
    private final String id;
    private final String model;
    private final long created = System.currentTimeMillis() / 1000;

    OutputFormatter(ApiKind kind, String id, String model) {
        this.kind = kind;
        this.id = id;
        this.model = model;
    }

    /** One streamed token as an SSE event; {@code cumulative} is SGLang's running text. */
    String tokenEvent(int tokenId, String text, String cumulative, int completionTokens) {
        ObjectNode event;
        switch (kind) {
            case CHAT: {
                event = header("chat.completion.chunk");
                ObjectNode choice = event.putArray("choices").addObject();
                choice.put("index", 0);
                ObjectNode delta = choice.putObject("delta");
                if (completionTokens == 1) {
                    delta.put("role", "assistant");
                }
                delta.put("content", text);
                choice.putNull("finish_reason");
                break;
            }
            case COMPLETIONS: {
                event = header("text_completion");
                ObjectNode choice = event.putArray("choices").addObject();
                choice.put("index", 0);
                choice.put("text", text);
                choice.putNull("finish_reason");
                break;
            }
            default: {
                event = JSON.createObjectNode();
                event.put("text", cumulative);
                event.putArray("output_ids").add(tokenId);
                ObjectNode meta = event.putObject("meta_info");
                meta.put("id", id);
                meta.put("completion_tokens", completionTokens);
                meta.putNull("finish_reason");
                break;
            }
        }
        return "data: " + event + "\n\n";
    }

    /** The final streamed events: finish reason, usage, and {@code [DONE]}. */
    String finishEvents(String finishReason, TokenSink.Usage usage, boolean includeUsage, String cumulative) {
        return finishEvents(finishReason, usage, includeUsage, cumulative, false);
    }

    /**
     * As above; {@code capacityMarker} adds {@code "kvroute_capacity_marker": true} to the finish
     * event, telling a PD router the decode node ran out of KV and a continuation segment is due.
     */
    String finishEvents(String finishReason, TokenSink.Usage usage, boolean includeUsage, String cumulative,
            boolean capacityMarker) {
        StringBuilder out = new StringBuilder();
        if (kind == ApiKind.GENERATE) {
            ObjectNode event = JSON.createObjectNode();
            event.put("text", cumulative);
            event.putArray("output_ids");
            event.set("meta_info", meta(finishReason, usage));
            if (capacityMarker) {
                event.put(CAPACITY_MARKER, true);
            }
            out.append("data: ").append(event).append("\n\n");
        } else {
            ObjectNode event = header(kind == ApiKind.CHAT ? "chat.completion.chunk" : "text_completion");
            ObjectNode choice = event.putArray("choices").addObject();
            choice.put("index", 0);
            if (kind == ApiKind.CHAT) {
                choice.putObject("delta");
            } else {
                choice.put("text", "");
            }
            choice.put("finish_reason", finishReason);
            if (capacityMarker) {
                event.put(CAPACITY_MARKER, true);
            }
            out.append("data: ").append(event).append("\n\n");
            if (includeUsage) {
                ObjectNode usageEvent = header(kind == ApiKind.CHAT ? "chat.completion.chunk" : "text_completion");
                usageEvent.putArray("choices");
                usageEvent.set("usage", usage(usage));
                out.append("data: ").append(usageEvent).append("\n\n");
            }
        }
        return out.append("data: [DONE]\n\n").toString();
    }

    /** The field that marks a segment ended for lack of decode KV capacity. */
    static final String CAPACITY_MARKER = "kvroute_capacity_marker";

    /** A whole non-streaming response. */
    String complete(String text, int[] outputIds, int count, String finishReason, TokenSink.Usage usage) {
        return complete(text, outputIds, count, finishReason, usage, false);
    }

    String complete(String text, int[] outputIds, int count, String finishReason, TokenSink.Usage usage,
            boolean capacityMarker) {
        ObjectNode body;
        switch (kind) {
            case CHAT: {
                body = header("chat.completion");
                ObjectNode choice = body.putArray("choices").addObject();
                choice.put("index", 0);
                ObjectNode message = choice.putObject("message");
                message.put("role", "assistant");
                message.put("content", text);
                choice.put("finish_reason", finishReason);
                body.set("usage", usage(usage));
                break;
            }
            case COMPLETIONS: {
                body = header("text_completion");
                ObjectNode choice = body.putArray("choices").addObject();
                choice.put("index", 0);
                choice.put("text", text);
                choice.put("finish_reason", finishReason);
                body.set("usage", usage(usage));
                break;
            }
            default: {
                body = JSON.createObjectNode();
                body.put("text", text);
                ArrayNode ids = body.putArray("output_ids");
                for (int i = 0; i < count; i++) {
                    ids.add(outputIds[i]);
                }
                body.set("meta_info", meta(finishReason, usage));
                break;
            }
        }
        if (capacityMarker) {
            body.put(CAPACITY_MARKER, true);
        }
        return body.toString();
    }

    private ObjectNode header(String object) {
        ObjectNode node = JSON.createObjectNode();
        node.put("id", id);
        node.put("object", object);
        node.put("created", created);
        node.put("model", model);
        return node;
    }

    private ObjectNode meta(String finishReason, TokenSink.Usage usage) {
        ObjectNode meta = JSON.createObjectNode();
        meta.put("id", id);
        meta.put("prompt_tokens", usage.promptTokens());
        meta.put("completion_tokens", usage.completionTokens());
        meta.put("cached_tokens", usage.cachedTokens());
        ObjectNode finish = meta.putObject("finish_reason");
        finish.put("type", finishReason);
        if ("length".equals(finishReason)) {
            finish.put("length", usage.completionTokens());
        }
        return meta;
    }

    static ObjectNode usage(TokenSink.Usage usage) {
        ObjectNode node = JSON.createObjectNode();
        node.put("prompt_tokens", usage.promptTokens());
        node.put("completion_tokens", usage.completionTokens());
        node.put("total_tokens", usage.promptTokens() + usage.completionTokens());
        node.putObject("prompt_tokens_details").put("cached_tokens", usage.cachedTokens());
        return node;
    }
}
