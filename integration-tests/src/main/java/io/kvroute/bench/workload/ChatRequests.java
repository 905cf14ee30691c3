package io.kvroute.bench.workload;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * OpenAI chat-completions request bodies as the harness sends them: streaming with
 * {@code stream_options.include_usage} (so the last chunk carries prompt and cached token counts),
 * {@code ignore_eos} so every request generates exactly {@code max_tokens}, and an optional
 * {@code user} naming the session for sticky routing.
 */
public final class ChatRequests {

    /** The chat-completions path on the router. */
    public static final String PATH = "/v1/chat/completions";

    /** Model name the harness asks for; the mock workers serve any name. */
    public static final String MODEL = "mock-qwen3";

    private static final ObjectMapper JSON = new ObjectMapper();

    private ChatRequests() {}

    /** One chat message. */
    public record Message(String role, String content) {}

    public static byte[] body(List<Message> messages, int maxTokens, String user) {
        return body(MODEL, messages, maxTokens, user);
    }

    /** A chat for {@code model} (a LoRA adapter's name, vLLM style, or the base model). */
    public static byte[] body(String model, List<Message> messages, int maxTokens, String user) {
        ObjectNode root = JSON.createObjectNode();
        root.put("model", model);
        ArrayNode array = root.putArray("messages");
        for (Message m : messages) {
            array.addObject().put("role", m.role()).put("content", m.content());
        }
        root.put("max_tokens", maxTokens);
        root.put("ignore_eos", true);
        root.put("stream", true);
        root.putObject("stream_options").put("include_usage", true);
        if (user != null) {
            root.put("user", user);
        }
        try {
            return JSON.writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a chat body", e);
        }
    }

    /**
     * A chat whose prompt arrives as token ids, as LightLLM's prefill-queue scheduling measurement
     * drove its engine: the
     * router never tokenizes it, the engine takes the ids as they are. {@code messages} carries only a
     * short label, for logs.
     */
    public static byte[] tokenPrompt(int[] inputIds, int maxTokens, String label) {
        ObjectNode root = JSON.createObjectNode();
        root.put("model", MODEL);
        root.putArray("messages").addObject().put("role", "user").put("content", label);
        ArrayNode ids = root.putArray("input_ids");
        for (int id : inputIds) {
            ids.add(id);
        }
        root.put("max_tokens", maxTokens);
        root.put("ignore_eos", true);
        root.put("stream", true);
        root.putObject("stream_options").put("include_usage", true);
        try {
            return JSON.writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a chat body", e);
        }
    }

    public static byte[] userPrompt(String text, int maxTokens) {
        return body(List.of(new Message("user", text)), maxTokens, null);
    }
}
