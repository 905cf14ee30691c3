package io.kvroute.mock.http;

import static io.kvroute.mock.http.Replies.JSON;
import static io.kvroute.mock.http.Replies.error;
import static io.kvroute.mock.http.Replies.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.mock.engine.Engine;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The mock's GET endpoints besides generation, in SGLang's shapes: {@code /health} (503 when the
 * worker is marked unhealthy or its engine loop died), {@code /server_info} (and its older
 * {@code /get_server_info}), {@code /v1/models}, {@code /scheduler} (the read-only queue view) and
 * {@code /debug/requests} (the last generation bodies received, for tests). Other methods on these
 * paths are 405 with {@code Allow: GET}; any other path is 404. Thread-safe.
 */
final class AdminEndpoints {

    private final Engine engine;
    private final String modelId;
    private final Supplier<Map<String, Object>> serverInfo;
    private final BooleanSupplier healthy;
    private final Supplier<List<JsonNode>> recentBodies;

    AdminEndpoints(Engine engine, String modelId, Supplier<Map<String, Object>> serverInfo, BooleanSupplier healthy,
            Supplier<List<JsonNode>> recentBodies) {
        this.engine = engine;
        this.modelId = modelId;
        this.serverInfo = serverInfo;
        this.healthy = healthy;
        this.recentBodies = recentBodies;
    }

    /** Answers {@code path}; always handles it (404 for an unknown path). */
    void handle(String path, String method, Response response, Callback callback) {
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            boolean known = switch (path) {
                case "/health", "/server_info", "/get_server_info", "/v1/models", "/scheduler", "/debug/requests" -> true;
                default -> false;
            };
            if (known) {
                response.getHeaders().put(HttpHeader.ALLOW, "GET");
                error(response, callback, 405, "method_not_allowed", path + " only accepts GET");
                return;
            }
        }
        switch (path) {
            case "/health" -> {
                boolean ok = healthy.getAsBoolean() && engine.isAlive(); // a dead engine loop fails health
                json(response, callback, ok ? 200 : 503, ok ? "{\"status\":\"ok\"}" : "{\"status\":\"unhealthy\"}");
            }
            case "/server_info", "/get_server_info" ->
                    json(response, callback, 200, JSON.valueToTree(serverInfo.get()).toString());
            case "/v1/models" -> {
                ObjectNode models = JSON.createObjectNode();
                models.put("object", "list");
                models.putArray("data").addObject().put("id", modelId).put("object", "model").put("owned_by", "mock");
                json(response, callback, 200, models.toString());
            }
            case "/scheduler" -> json(response, callback, 200, JSON.valueToTree(engine.schedulerView()).toString());
            case "/debug/requests" -> {
                ArrayNode bodies = JSON.createArrayNode();
                recentBodies.get().forEach(bodies::add);
                json(response, callback, 200, bodies.toString());
            }
            default -> error(response, callback, 404, "not_found_error", "no route for " + path);
        }
    }
}
