package io.kvroute.router.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's HTTP surface on Jetty's core {@link Handler} API: OpenAI-compatible inference
 * endpoints, health and readiness probes, model listing and the Prometheus scrape.
 *
 * <p>Per inference request: read the body (size-limited, asynchronous), parse JSON once, validate
 * only what the router needs, resolve the model, capture the routable candidates once, ask the
 * policy, then relay through a {@link ProxyExchange}. Every rejection is an OpenAI-style JSON error
 * with a precise status; an unexpected exception becomes a 500 JSON error, never a bare page.
 *
 * <p>When {@code claimUnknownPaths} is false (embedded in an existing server), paths the router does
 * not own return {@code false} so the host's next handler can serve them.
 */
public final class RouterHandler extends Handler.Abstract {

    static final String WORKER_HEADER = "x-kvroute-worker";
    private static final Logger LOG = LoggerFactory.getLogger(RouterHandler.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpField JSON_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");

    private final RouterContext ctx;
    private final RouterConfig config;
    private final WorkerRegistry registry;
    private final RouterMetrics metrics;
    private final AdminRoutes admin;
    private final BearerAuth inferenceAuth;
    private final IngressTokenization tokenization;
    private final boolean claimUnknownPaths;

    public RouterHandler(RouterContext ctx, boolean claimUnknownPaths) {
        super(InvocationType.NON_BLOCKING);
        this.ctx = Objects.requireNonNull(ctx, "ctx");
        this.config = ctx.config();
        this.registry = ctx.registry();
        this.metrics = ctx.metrics();
        this.admin = new AdminRoutes(ctx);
        this.inferenceAuth = BearerAuth.of(config.apiKey());
        this.tokenization = new IngressTokenization(ctx.tokenizers(), config.disableInputIdsForwarding(), metrics);
        this.claimUnknownPaths = claimUnknownPaths;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        String method = request.getMethod();
        try {
            if (AdminRoutes.owns(path)) {
                admin.handle(path, request, response, callback);
                return true;
            }
            Endpoint endpoint = Endpoint.forPath(path);
            if (endpoint != null) {
                if (!"POST".equals(method)) {
                    return methodNotAllowed(response, callback, path, "POST");
                }
                handleInference(endpoint, request, response, callback);
                return true;
            }
            switch (path) {
                case "/healthz":
                    return get(method, response, callback, path, () -> json(response, callback, 200, "{\"status\":\"ok\"}"));
                case "/readyz":
                    return get(method, response, callback, path, () -> readyz(response, callback));
                case "/metrics":
                    return get(method, response, callback, path, () -> {
                        response.setStatus(200);
                        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
                        response.write(true, ByteBuffer.wrap(metrics.scrape().getBytes(StandardCharsets.UTF_8)), callback);
                    });
                case "/v1/models":
                    return get(method, response, callback, path, () -> models(response, callback));
                case "/v1/loads":
                    return get(method, response, callback, path, () -> loads(response, callback));
                default:
                    if (!claimUnknownPaths) {
                        return false;
                    }
                    OpenAiErrors.send(response, callback, 404, "not_found_error", "no route for " + method + " " + path);
                    return true;
            }
        } catch (RuntimeException e) {
            LOG.warn("unexpected failure handling {} {}", method, path, e);
            if (!response.isCommitted()) {
                OpenAiErrors.send(response, callback, 500, "server_error", "internal router error: " + e.getClass().getSimpleName());
            } else {
                callback.failed(e);
            }
            return true;
        }
    }

    private boolean get(String method, Response response, Callback callback, String path, Runnable action) {
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            return methodNotAllowed(response, callback, path, "GET");
        }
        action.run();
        return true;
    }

    private boolean methodNotAllowed(Response response, Callback callback, String path, String allowed) {
        response.getHeaders().put(HttpHeader.ALLOW, allowed);
        OpenAiErrors.send(response, callback, 405, "method_not_allowed", path + " only accepts " + allowed);
        return true;
    }

    private void readyz(Response response, Callback callback) {
        List<Worker> usable = usableWorkers();
        boolean draining = ctx.active().draining();
        boolean plainPool = usable.stream().anyMatch(w -> w.role() == WorkerRole.REGULAR);
        boolean pdPair = usable.stream().anyMatch(w -> w.role() == WorkerRole.PREFILL)
                && usable.stream().anyMatch(w -> w.role() == WorkerRole.DECODE);
        boolean ready = (plainPool || pdPair) && !draining;
        String body = "{\"ready\":" + ready + ",\"draining\":" + draining + ",\"usable_workers\":" + usable.size()
                + ",\"workers\":" + registry.fleet().workers().size() + "}";
        json(response, callback, ready ? 200 : 503, body);
    }

    private void models(Response response, Callback callback) {
        ObjectNode root = JSON.createObjectNode();
        root.put("object", "list");
        ArrayNode data = root.putArray("data");
        for (String id : knownModels()) {
            ObjectNode model = data.addObject();
            model.put("id", id);
            model.put("object", "model");
            model.put("owned_by", "kvroute");
        }
        json(response, callback, 200, root.toString());
    }

    /** Healthy, not draining, breaker not open. */
    private List<Worker> usableWorkers() {
        List<Worker> usable = new ArrayList<>();
        for (Worker worker : registry.fleet().routable()) {
            if (ctx.breakers().allowsTraffic(worker.id())) {
                usable.add(worker);
            }
        }
        return usable;
    }

    /** {@code GET /v1/loads}: the load plane's view per worker, with the router's own in-flight count. */
    private void loads(Response response, Callback callback) {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode workers = root.putArray("workers");
        java.util.Map<String, java.util.Map<String, Object>> byId = new java.util.HashMap<>();
        for (java.util.Map<String, Object> entry : ctx.loads().view()) {
            byId.put(String.valueOf(entry.get("url")), entry);
        }
        for (Worker worker : registry.fleet().all()) {
            java.util.Map<String, Object> entry = new java.util.LinkedHashMap<>();
            entry.put("id", worker.id());
            java.util.Map<String, Object> view = byId.get(worker.id());
            if (view != null) {
                entry.putAll(view);
            } else {
                entry.put("fresh", false);
                entry.put("pressure_source", "router_local");
            }
            entry.put("url", worker.url());
            entry.put("role", worker.role().label());
            entry.put("router_in_flight", ctx.inFlight().get(worker.id()));
            workers.add(JSON.valueToTree(entry));
        }
        json(response, callback, 200, root.toString());
    }

    private TreeSet<String> knownModels() {
        TreeSet<String> ids = new TreeSet<>(config.modelIds());
        for (Worker worker : registry.fleet().workers().values()) {
            if (worker.modelId() != null) {
                ids.add(worker.modelId());
            }
        }
        return ids;
    }

    private static void json(Response response, Callback callback, int status, String body) {
        response.setStatus(status);
        response.getHeaders().put(JSON_TYPE);
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }

    private void handleInference(Endpoint endpoint, Request request, Response response, Callback completion) {
        long startNanos = System.nanoTime();
        TraceSpan span = ctx.tracer().ingress("kvroute.request", name -> request.getHeaders().get(name))
                .tag("endpoint", endpoint.path);
        RouteFacts.attach(request, endpoint.path, span);
        Callback callback = span == TraceSpan.NOOP ? completion : new TracedCompletion(completion, span, response);
        if (ctx.active().draining()) {
            reject(endpoint, response, callback, startNanos,
                    new ApiException(503, "service_unavailable", "the router is shutting down; retry on another replica"));
            return;
        }
        if (inferenceAuth != null && !inferenceAuth.accepts(request)) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
            reject(endpoint, response, callback, startNanos,
                    new ApiException(401, "authentication_error", "a valid API key is required (Authorization: Bearer ...)"));
            return;
        }
        String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        if (contentType != null && !isJson(contentType)) {
            reject(endpoint, response, callback, startNanos,
                    new ApiException(415, "unsupported content type '" + contentType + "'; send application/json"));
            return;
        }
        BodyReader.read(request, config.maxBodyBytes(), new BodyReader.Sink() {
            @Override
            public void onBody(byte[] body) {
                try {
                    dispatch(endpoint, body, request, response, callback, startNanos);
                } catch (ApiException e) {
                    reject(endpoint, response, callback, startNanos, e);
                } catch (RuntimeException e) {
                    LOG.warn("unexpected failure routing {}", endpoint.path, e);
                    reject(endpoint, response, callback, startNanos,
                            new ApiException(500, "server_error", "internal router error: " + e.getClass().getSimpleName()));
                }
            }

            @Override
            public void onError(ApiException error) {
                reject(endpoint, response, callback, startNanos, error);
            }
        });
    }

    private void dispatch(Endpoint endpoint, byte[] body, Request request, Response response, Callback callback,
            long startNanos) throws ApiException {
        BodyProbe probe = BodyProbe.parse(body);
        endpoint.validate(probe);
        String model = probe.model;
        RouteFacts.of(request).model(model);
        TreeSet<String> models = knownModels();
        if (model != null && !models.isEmpty() && !models.contains(model)) {
            throw new ApiException(404, "model_not_found", "model '" + model + "' is not served here (available: "
                    + String.join(", ", models) + ")");
        }
        java.util.function.Supplier<List<Worker>> eligible = pool(WorkerRole.REGULAR, model);
        java.util.function.Supplier<List<Worker>> prefills = pool(WorkerRole.PREFILL, model);
        java.util.function.Supplier<List<Worker>> decodes = pool(WorkerRole.DECODE, model);
        boolean pd = !prefills.get().isEmpty() && !decodes.get().isEmpty();
        String sessionKey = request.getHeaders().get(config.sessionIdHeader());
        boolean callerSentIds = probe.inputIds == com.fasterxml.jackson.core.JsonToken.START_ARRAY;
        if (pd) {
            IngressTokenization.Result tokens = tokenize(request, endpoint, model, body, ctx.prefillPolicy().needsTokens(), callerSentIds);
            com.fasterxml.jackson.databind.node.ObjectNode tree;
            try {
                tree = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(tokens.outgoingBody());
            } catch (java.io.IOException e) {
                throw new ApiException(400, "invalid JSON body: " + e.getMessage());
            }
            new PdDispatch(ctx, endpoint, tree, tokens.inputTokens(), tokens.tokens() == null ? null : tokens.tokens().ids(),
                    ctx.loads().snapshot(), new RouteHints(sessionKey, tokens.routingText(), model == null ? "default" : model),
                    prefills, decodes, ctx.prefillPolicy(), ctx.decodePolicy(), request, response, callback, startNanos).start();
            return;
        }
        if (eligible.get().isEmpty()) {
            throw new ApiException(503, "service_unavailable", "no usable worker for model '"
                    + (model == null ? "(any)" : model) + "'");
        }
        IngressTokenization.Result tokens = tokenize(request, endpoint, model, body, ctx.policy().needsTokens(), callerSentIds);
        int[] tokenIds = tokens.tokens() == null ? null : tokens.tokens().ids();
        new Dispatch(ctx, endpoint, tokens.outgoingBody(), probe.stream, tokens.inputTokens(), tokenIds,
                ctx.loads().snapshot(), new RouteHints(sessionKey, tokens.routingText(), model == null ? "default" : model),
                eligible,
                request, response, callback, startNanos).start();
    }

    private IngressTokenization.Result tokenize(Request request, Endpoint endpoint, String model, byte[] body,
            boolean policyNeedsTokens, boolean callerSentIds) throws ApiException {
        TraceSpan span = RouteFacts.of(request).span().child("kvroute.tokenize");
        try {
            IngressTokenization.Result tokens = tokenization.apply(endpoint, model, body, policyNeedsTokens, callerSentIds);
            span.tag("input_tokens", tokens.inputTokens()).tag("input_ids_forwarding", tokens.forwardingOutcome());
            return tokens;
        } finally {
            span.end();
        }
    }

    /** Ends the ingress span with the final status when the response completes. */
    private static final class TracedCompletion extends Callback.Nested {
        private final TraceSpan span;
        private final Response response;

        TracedCompletion(Callback completion, TraceSpan span, Response response) {
            super(completion);
            this.span = span;
            this.response = response;
        }

        @Override
        public void succeeded() {
            span.tag("status", response.getStatus()).end();
            super.succeeded();
        }

        @Override
        public void failed(Throwable x) {
            span.tag("status", response.getStatus()).error(x.getClass().getSimpleName()).end();
            super.failed(x);
        }
    }

    private java.util.function.Supplier<List<Worker>> pool(WorkerRole role, String model) {
        return () -> {
            List<Worker> out = new ArrayList<>();
            for (Worker worker : usableWorkers()) {
                if (worker.role() == role && worker.serves(model)) {
                    out.add(worker);
                }
            }
            return out;
        };
    }

    private void reject(Endpoint endpoint, Response response, Callback callback, long startNanos, ApiException error) {
        OpenAiErrors.send(response, callback, error.status, error.type, error.getMessage());
        metrics.request(endpoint.path, error.status);
        metrics.duration(endpoint.path, "rejected", System.nanoTime() - startNanos);
    }

    private static boolean isJson(String contentType) {
        String mime = contentType.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
        return mime.equals("application/json") || mime.endsWith("+json");
    }
}
