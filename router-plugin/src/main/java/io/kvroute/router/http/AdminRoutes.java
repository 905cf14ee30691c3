package io.kvroute.router.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.ConfigValidator;
import io.kvroute.router.ingress.BearerAuth;
import io.kvroute.router.ingress.InferenceFrontDoor.BodySink;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The admin API: {@code GET /workers}, {@code POST /workers}, {@code DELETE /workers/{id}} and
 * {@code POST /workers/{id}/drain}. Disabled (404) unless an admin key is configured; every call
 * needs {@code Authorization: Bearer <key>} (401 otherwise). A submitted URL is validated before
 * anything touches it: http(s) with a host, nothing else.
 */
final class AdminRoutes {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_ADMIN_BODY = 64 * 1024;

    private final RouterContext ctx;
    private final BearerAuth auth;

    AdminRoutes(RouterContext ctx) {
        this.ctx = ctx;
        this.auth = BearerAuth.of(ctx.config().auth().adminApiKey());
    }

    static boolean owns(String path) {
        return path.equals("/workers") || path.startsWith("/workers/");
    }

    void handle(String path, Request request, Response response, Callback callback) {
        if (auth == null) {
            OpenAiErrors.send(response, callback, 404, "not_found_error", "the admin API is disabled (no --admin-api-key)");
            return;
        }
        if (!auth.accepts(request.getHeaders().get(HttpHeader.AUTHORIZATION))) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
            OpenAiErrors.send(response, callback, 401, "authentication_error", "a valid admin bearer token is required");
            return;
        }
        String method = request.getMethod();
        List<String> parts = new ArrayList<>(List.of(path.substring(1).split("/", -1)));
        if (parts.size() == 1) {
            if ("GET".equals(method)) {
                list(response, callback);
            } else if ("POST".equals(method)) {
                BodyReader.read(request, MAX_ADMIN_BODY, new BodySink() {
                    @Override
                    public void onBody(byte[] body) {
                        add(body, response, callback);
                    }

                    @Override
                    public void onError(int status, String message) {
                        OpenAiErrors.send(response, callback, status, OpenAiErrors.typeFor(status), message);
                    }
                });
            } else {
                notAllowed(response, callback, "GET, POST");
            }
            return;
        }
        String id = parts.get(1);
        if (parts.size() == 2 && "DELETE".equals(method)) {
            remove(id, response, callback);
        } else if (parts.size() == 3 && parts.get(2).equals("drain") && "POST".equals(method)) {
            drain(id, response, callback);
        } else if (parts.size() == 2 || (parts.size() == 3 && parts.get(2).equals("drain"))) {
            notAllowed(response, callback, parts.size() == 2 ? "DELETE" : "POST");
        } else {
            OpenAiErrors.send(response, callback, 404, "not_found_error", "no admin route " + path);
        }
    }

    private void list(Response response, Callback callback) {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode workers = root.putArray("workers");
        for (Worker worker : ctx.registry().fleet().all()) {
            workers.add(describe(worker));
        }
        json(response, callback, 200, root);
    }

    private ObjectNode describe(Worker worker) {
        ObjectNode node = JSON.createObjectNode();
        node.put("id", worker.id());
        node.put("url", worker.url());
        node.put("role", worker.role().label());
        node.put("model_id", worker.modelId());
        if (worker.bootstrapPort() == null) {
            node.putNull("bootstrap_port");
        } else {
            node.put("bootstrap_port", worker.bootstrapPort());
        }
        ArrayNode endpoints = node.putArray("load_endpoints");
        worker.loadEndpoints().forEach(endpoints::add);
        node.put("healthy", ctx.registry().fleet().isHealthy(worker.id()));
        node.put("draining", ctx.registry().fleet().isDraining(worker.id()));
        node.put("breaker", ctx.breakers().state(worker.id()).name().toLowerCase(java.util.Locale.ROOT));
        node.put("in_flight", ctx.inFlight().get(worker.id()));
        return node;
    }

    private void add(byte[] body, Response response, Callback callback) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (java.io.IOException e) {
            OpenAiErrors.send(response, callback, 400, "invalid_request_error", "invalid JSON body");
            return;
        }
        if (root == null || !root.isObject() || !root.path("url").isTextual()) {
            OpenAiErrors.send(response, callback, 400, "invalid_request_error", "body must be an object with a string 'url'");
            return;
        }
        String url = root.get("url").asText();
        String problem = ConfigValidator.urlProblem(url);
        if (problem != null) {
            OpenAiErrors.send(response, callback, 400, "invalid_request_error", "'url' " + problem);
            return;
        }
        WorkerRole role = root.has("role") ? WorkerRole.parse(root.path("role").asText(null)) : WorkerRole.REGULAR;
        if (role == null) {
            OpenAiErrors.send(response, callback, 400, "invalid_request_error", "'role' must be regular, prefill or decode");
            return;
        }
        Integer bootstrapPort = null;
        JsonNode port = root.get("bootstrap_port");
        if (port != null && !port.isNull()) {
            if (!port.canConvertToInt() || port.asInt() < 1 || port.asInt() > 65535) {
                OpenAiErrors.send(response, callback, 400, "invalid_request_error", "'bootstrap_port' must be 1..65535");
                return;
            }
            bootstrapPort = port.asInt();
        }
        List<String> endpoints = new ArrayList<>();
        JsonNode load = root.has("load_endpoints") ? root.get("load_endpoints") : root.get("load_endpoint");
        if (load != null && !load.isNull()) {
            if (load.isTextual()) {
                endpoints.add(load.asText());
            } else if (load.isArray()) {
                load.forEach(e -> endpoints.add(e.asText()));
            }
            for (String endpoint : endpoints) {
                if (!endpoint.matches("tcp://[^\\s/]+:\\d{1,5}")) {
                    OpenAiErrors.send(response, callback, 400, "invalid_request_error",
                            "load endpoints must look like tcp://host:port");
                    return;
                }
            }
        }
        // KV-event endpoints of an engine without /server_info (vLLM): the body's template, else the configured ones
        Worker worker = ctx.config().kvEvents().templates().apply(Worker.of(url, role, bootstrapPort)
                .withLoadEndpoints(endpoints));
        JsonNode template = root.get("kv_events_template");
        if (template != null && !template.isNull()) {
            try {
                worker = worker.withKvEvents(io.kvroute.router.worker.KvEventsTemplate.parse(template.asText()).advert());
            } catch (IllegalArgumentException e) {
                OpenAiErrors.send(response, callback, 400, "invalid_request_error",
                        "'kv_events_template' " + e.getMessage());
                return;
            }
        }
        if (!ctx.registry().add(worker)) {
            OpenAiErrors.send(response, callback, 409, "conflict", "worker " + worker.url() + " is already registered as " + worker.id());
            return;
        }
        ctx.health().probeAll();
        json(response, callback, 201, describe(worker));
    }

    private void remove(String id, Response response, Callback callback) {
        var removed = ctx.registry().remove(id);
        if (removed.isEmpty()) {
            OpenAiErrors.send(response, callback, 404, "not_found_error", "no worker with id '" + id + "'");
            return;
        }
        ctx.breakers().forget(id);
        ObjectNode body = JSON.createObjectNode();
        body.put("removed", id);
        body.put("url", removed.get().url());
        json(response, callback, 200, body);
    }

    private void drain(String id, Response response, Callback callback) {
        if (!ctx.registry().drain(id)) {
            OpenAiErrors.send(response, callback, 404, "not_found_error", "no worker with id '" + id + "'");
            return;
        }
        ObjectNode body = JSON.createObjectNode();
        body.put("draining", id);
        body.put("in_flight", ctx.inFlight().get(id));
        json(response, callback, 202, body);
    }

    private static void notAllowed(Response response, Callback callback, String allowed) {
        response.getHeaders().put(HttpHeader.ALLOW, allowed);
        OpenAiErrors.send(response, callback, 405, "method_not_allowed", "allowed: " + allowed);
    }

    private static void json(Response response, Callback callback, int status, JsonNode body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(body.toString().getBytes(StandardCharsets.UTF_8)), callback);
    }
}
