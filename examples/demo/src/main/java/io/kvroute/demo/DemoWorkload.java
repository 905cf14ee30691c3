package io.kvroute.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The demo's workload: a multi-tenant chat service. Each tenant has a long system prompt shared
 * by all its requests (the prefix a cache-aware router can exploit); each request adds a short
 * user question. Half the requests stream. Deterministic for a given seed.
 */
final class DemoWorkload {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] WORDS = {
        "gpu", "kernel", "batch", "prefix", "token", "cache", "radix", "queue", "router", "decode", "prefill",
        "latency", "throughput", "shard", "replica", "tensor", "matrix", "stream", "budget", "page"
    };

    /** The LoRA adapter the demo's vLLM-style workers serve; every {@link #ADAPTER_EVERY}th request names it as its model. */
    static final String ADAPTER = "sql-lora";
    static final int ADAPTER_EVERY = 5;

    /** One request to send. */
    record Item(int index, int tenant, boolean stream, String body) {}

    static List<Item> generate(int requests, int tenants, int systemPromptWords, int maxTokens, RandomGenerator rng) {
        return generate(requests, tenants, systemPromptWords, maxTokens, rng, false);
    }

    /** With {@code adapter}, every {@link #ADAPTER_EVERY}th request names the LoRA adapter as its model. */
    static List<Item> generate(int requests, int tenants, int systemPromptWords, int maxTokens, RandomGenerator rng,
            boolean adapter) {
        List<String> systemPrompts = new ArrayList<>();
        for (int t = 0; t < tenants; t++) {
            StringBuilder prompt = new StringBuilder("You are the assistant of tenant ").append(t).append('.');
            for (int w = 0; w < systemPromptWords; w++) {
                prompt.append(' ').append(WORDS[rng.nextInt(WORDS.length)]).append(rng.nextInt(1000));
            }
            systemPrompts.add(prompt.toString());
        }
        List<Item> items = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            int tenant = rng.nextInt(tenants);
            boolean stream = rng.nextBoolean();
            ObjectNode body = JSON.createObjectNode();
            body.put("model", adapter && i % ADAPTER_EVERY == ADAPTER_EVERY - 1 ? ADAPTER : "mock-model");
            ArrayNode messages = body.putArray("messages");
            messages.addObject().put("role", "system").put("content", systemPrompts.get(tenant));
            messages.addObject().put("role", "user").put("content",
                    "Question " + i + ": how does " + WORDS[rng.nextInt(WORDS.length)] + " affect "
                            + WORDS[rng.nextInt(WORDS.length)] + "?");
            body.put("max_tokens", maxTokens);
            body.put("stream", stream);
            if (stream) {
                body.putObject("stream_options").put("include_usage", true);
            }
            items.add(new Item(i, tenant, stream, body.toString()));
        }
        return items;
    }

    private DemoWorkload() {}
}
