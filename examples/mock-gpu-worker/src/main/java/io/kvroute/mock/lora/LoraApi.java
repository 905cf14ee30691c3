package io.kvroute.mock.lora;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.BiConsumer;
import java.util.function.DoubleSupplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The mock worker's LoRA HTTP surface ({@code --max-loras N}), answered ahead of the worker's other routes:
 * <ul>
 *   <li>{@code POST /v1/load_lora_adapter} (vLLM) and {@code /load_lora_adapter} (SGLang), body
 *       {@code {"lora_name", "lora_path"}}: registers the adapter and loads it into a slot when one is free
 *       or idle, answering once loaded; 400 "has already been loaded" when it is served already. Unload:
 *       {@code /v1/unload_lora_adapter}, {@code /unload_lora_adapter} with {@code lora_name}; 404 when not
 *       served. Both only with {@code --lora-runtime-updating} (vLLM mounts them only with
 *       {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=1}, {@code vllm/entrypoints/serve/lora/api_router.py}); 404
 *       otherwise.</li>
 *   <li>{@code GET /v1/models}: the base card, then one card per served adapter, {@code root} = its path,
 *       {@code parent} = the base model (vLLM {@code vllm/entrypoints/openai/models/serving.py}).</li>
 *   <li>{@code GET /debug/lora}: slots, served adapters, loads and evictions (for tests and the bench).</li>
 * </ul>
 * {@link #adapterOf} and {@link #run} put generation requests for an adapter through {@link LoraSlots};
 * {@link #metrics} renders vLLM's {@code vllm:lora_requests_info} for {@code /metrics}, {@link #sglangMetrics}
 * SGLang's LoRA pool gauges. Thread-safe.
 */
public final class LoraApi extends Handler.Abstract {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Largest load/unload body read. */
    private static final int MAX_BODY_BYTES = 64 * 1024;

    private final LoraSlots slots;
    private final String baseModel;
    private final String ownedBy;
    private final DoubleSupplier wallClockSeconds;

    /**
     * @param ownedBy the base card's {@code owned_by} ({@code vllm} or {@code sglang})
     * @param wallClockSeconds the value of {@code vllm:lora_requests_info} (vLLM sets it to the current time)
     */
    public LoraApi(LoraSlots slots, String baseModel, String ownedBy, DoubleSupplier wallClockSeconds) {
        this.slots = requireNonNull(slots, "slots");
        this.baseModel = requireNonNull(baseModel, "baseModel");
        this.ownedBy = requireNonNull(ownedBy, "ownedBy");
        this.wallClockSeconds = requireNonNull(wallClockSeconds, "wallClockSeconds");
    }

    public LoraSlots slots() {
        return slots;
    }

    /** The adapter a generation body names: a {@code model} other than the base (vLLM), else {@code lora_path} (SGLang). */
    public String adapterOf(JsonNode body) {
        JsonNode model = body.get("model");
        if (model != null && model.isTextual() && !model.asText().isEmpty() && !model.asText().equals(baseModel)
                && !model.asText().equals("default")) {
            return model.asText();
        }
        JsonNode path = body.get("lora_path");
        return path != null && path.isTextual() && !path.asText().isEmpty() ? path.asText() : null;
    }

    /**
     * Runs {@code admit} once the adapter is resident, with its cache salt and a callback that releases the
     * adapter's slot when the response ends; answers 404 at once when the adapter is not served.
     */
    public void run(String adapter, Response response, Callback callback, BiConsumer<Integer, Callback> admit) {
        slots.acquire(adapter).whenComplete((lease, failure) -> {
            if (failure != null) {
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (cause instanceof LoraSlots.NotServed) {
                    error(response, callback, 404, "NotFoundError", cause.getMessage());
                } else {
                    error(response, callback, 500, "InternalServerError", String.valueOf(cause));
                }
                return;
            }
            admit.accept(lease.cacheSalt(), Callback.from(callback, lease::release));
        });
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        String method = request.getMethod();
        switch (path) {
            case "/v1/models" -> {
                if (!"GET".equals(method)) {
                    return false;
                }
                write(response, callback, 200, "application/json", modelCards().toString());
                return true;
            }
            case "/debug/lora" -> {
                write(response, callback, 200, "application/json", JSON.valueToTree(slots.stats()).toString());
                return true;
            }
            case "/v1/load_lora_adapter", "/load_lora_adapter", "/v1/unload_lora_adapter", "/unload_lora_adapter" -> {
                if (!slots.runtimeUpdating()) {
                    write(response, callback, 404, "application/json", "{\"detail\":\"Not Found\"}");
                    return true;
                }
                if (!"POST".equals(method)) {
                    response.getHeaders().put(HttpHeader.ALLOW, "POST");
                    error(response, callback, 405, "MethodNotAllowed", path + " only accepts POST");
                    return true;
                }
                boolean load = path.contains("/load_");
                Content.Source.asByteArrayAsync(request, MAX_BODY_BYTES).whenComplete((bytes, failure) -> {
                    if (failure != null) {
                        error(response, callback, 413, "BadRequestError", "body unreadable or over " + MAX_BODY_BYTES + " bytes");
                        return;
                    }
                    if (load) {
                        load(bytes, response, callback);
                    } else {
                        unload(bytes, response, callback);
                    }
                });
                return true;
            }
            default -> {
                return false;
            }
        }
    }

    private void load(byte[] bytes, Response response, Callback callback) {
        JsonNode body = parse(bytes);
        String name = text(body, "lora_name");
        String path = text(body, "lora_path");
        if (name == null || path == null) {
            error(response, callback, 400, "BadRequestError", "Both 'lora_name' and 'lora_path' must be provided.");
            return;
        }
        boolean added;
        try {
            added = slots.register(name, path);
        } catch (IllegalStateException e) {
            error(response, callback, 400, "BadRequestError", e.getMessage());
            return;
        }
        if (!added) {
            // vLLM's answer to a second load of the same name
            error(response, callback, 400, "BadRequestError", "The lora adapter '" + name + "' has already been loaded.");
            return;
        }
        slots.warm(name).whenComplete((ok, failure) -> {
            if (failure != null) {
                error(response, callback, 500, "InternalServerError", "loading '" + name + "' failed: " + failure);
                return;
            }
            write(response, callback, 200, "text/plain; charset=utf-8",
                    "Success: LoRA adapter '" + name + "' added successfully.");
        });
    }

    private void unload(byte[] bytes, Response response, Callback callback) {
        String name = text(parse(bytes), "lora_name");
        if (name == null) {
            error(response, callback, 400, "BadRequestError", "'lora_name' must be provided.");
            return;
        }
        if (!slots.unregister(name)) {
            error(response, callback, 404, "NotFoundError", "The lora adapter '" + name + "' cannot be found.");
            return;
        }
        write(response, callback, 200, "text/plain; charset=utf-8",
                "Success: LoRA adapter '" + name + "' removed successfully.");
    }

    /** The model list: the base card, then one card per served adapter. */
    public ObjectNode modelCards() {
        ObjectNode list = JSON.createObjectNode();
        list.put("object", "list");
        ArrayNode data = list.putArray("data");
        ObjectNode base = data.addObject();
        base.put("id", baseModel);
        base.put("object", "model");
        base.put("owned_by", ownedBy);
        base.put("root", baseModel);
        base.putNull("parent");
        slots.served().forEach((name, path) -> {
            ObjectNode card = data.addObject();
            card.put("id", name);
            card.put("object", "model");
            card.put("owned_by", ownedBy);
            card.put("root", path);
            card.put("parent", baseModel);
        });
        return list;
    }

    /**
     * vLLM's {@code vllm:lora_requests_info} line (vLLM {@code vllm/v1/metrics/loggers.py}): running and
     * waiting adapters comma-joined, {@code max_lora}, value the current wall-clock time; labels sorted.
     */
    public String metrics() {
        LoraSlots.Stats s = slots.stats();
        return "# HELP vllm:lora_requests_info Running stats on lora requests.\n"
                + "# TYPE vllm:lora_requests_info gauge\n"
                + "vllm:lora_requests_info{max_lora=\"" + s.maxLoras() + "\",running_lora_adapters=\""
                + escape(String.join(",", s.running())) + "\",waiting_lora_adapters=\""
                + escape(String.join(",", s.waiting())) + "\"} "
                + String.format(Locale.ROOT, "%.15e", wallClockSeconds.getAsDouble()) + "\n";
    }

    /**
     * SGLang's LoRA pool gauges (SGLang {@code python/sglang/srt/observability/metrics_collector.py}, created with
     * {@code --enable-lora}): {@code sglang:lora_pool_slots_used} (SGLang counts the distinct adapters of the
     * running batch, {@code scheduler_metrics_mixin.py}; here the adapters with requests in flight),
     * {@code sglang:lora_pool_slots_total} ({@code max_loras_per_batch}) and {@code sglang:lora_pool_utilization}
     * (used / total), each with the collector's {@code labels}.
     */
    public String sglangMetrics(String labels) {
        LoraSlots.Stats s = slots.stats();
        int used = s.running().size();
        StringBuilder out = new StringBuilder(512);
        io.kvroute.mock.http.SglangMetricsApi.gauge(out, "sglang:lora_pool_slots_used",
                "Number of LoRA adapter slots currently occupied in GPU memory.", labels, used);
        io.kvroute.mock.http.SglangMetricsApi.gauge(out, "sglang:lora_pool_slots_total",
                "Total number of LoRA adapter slots available (max_loras_per_batch).", labels, s.maxLoras());
        io.kvroute.mock.http.SglangMetricsApi.gauge(out, "sglang:lora_pool_utilization",
                "LoRA pool utilization ratio.", labels, s.maxLoras() == 0 ? 0 : (double) used / s.maxLoras());
        return out.toString();
    }

    private static JsonNode parse(byte[] bytes) {
        try {
            JsonNode node = JSON.readTree(bytes);
            return node == null ? JSON.createObjectNode() : node;
        } catch (java.io.IOException e) {
            return JSON.createObjectNode();
        }
    }

    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        return v != null && v.isTextual() && !v.asText().isBlank() ? v.asText() : null;
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static void error(Response response, Callback callback, int status, String type, String message) {
        ObjectNode root = JSON.createObjectNode();
        root.put("object", "error");
        root.put("message", message);
        root.put("type", type);
        root.put("code", status);
        write(response, callback, status, "application/json", root.toString());
    }

    private static void write(Response response, Callback callback, int status, String contentType, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }
}
