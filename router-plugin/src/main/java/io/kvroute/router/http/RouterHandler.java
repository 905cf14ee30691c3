package io.kvroute.router.http;

import io.kvroute.router.accesslog.AccessLog;
import io.kvroute.router.trace.TraceSpan;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.ingress.BearerAuth;
import io.kvroute.router.ingress.InferenceFrontDoor;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
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
 * policy, then relay: all of that is the transport-neutral {@link InferenceFrontDoor} and the
 * {@code dispatch} core; this class only adapts Jetty's request, response and callback to it. Every rejection is an OpenAI-style JSON error
 * with a precise status; an unexpected exception becomes a 500 JSON error, never a bare page.
 *
 * <p>When {@code claimUnknownPaths} is false (embedded in an existing server), paths the router does
 * not own return {@code false} so the host's next handler can serve them.
 *
 * <p>With {@code --api-key} every path but {@code /healthz} and {@code /readyz} needs the key:
 * inference, {@code /v1/models}, {@code /v1/loads}, {@code /metrics} (unless it is served on
 * {@code --metrics-port} by {@link MetricsHandler}, and then not here at all) and, standalone, unknown
 * paths (401 before 404, so probing reveals nothing). The admin API keeps its own key.
 */
public final class RouterHandler extends Handler.Abstract {

    private static final Logger LOG = LoggerFactory.getLogger(RouterHandler.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpField JSON_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");

    private final RouterContext ctx;
    private final RouterConfig config;
    private final WorkerRegistry registry;
    private final RouterMetrics metrics;
    private final AdminRoutes admin;
    /** {@code --api-key} for the non-inference paths; inference paths are checked by the front door. */
    private final BearerAuth inferenceAuth;
    private final InferenceFrontDoor frontDoor;
    private final boolean claimUnknownPaths;

    /** A handler over the router's shared front door (one per router: hooks and listeners live there). */
    public RouterHandler(RouterContext ctx, InferenceFrontDoor frontDoor, boolean claimUnknownPaths) {
        super(InvocationType.NON_BLOCKING);
        this.frontDoor = Objects.requireNonNull(frontDoor, "frontDoor");
        this.ctx = Objects.requireNonNull(ctx, "ctx");
        this.config = ctx.config();
        this.registry = ctx.registry();
        this.metrics = ctx.metrics();
        this.admin = new AdminRoutes(ctx);
        this.inferenceAuth = BearerAuth.of(config.auth().apiKey());
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
            boolean inference = InferenceFrontDoor.serves(path);
            if (!inference && !open(path) && (claimUnknownPaths || owns(path))
                    && inferenceAuth != null && !inferenceAuth.accepts(request.getHeaders().get(HttpHeader.AUTHORIZATION))) {
                response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
                OpenAiErrors.send(response, callback, 401, "authentication_error",
                        "a valid API key is required (Authorization: Bearer ...)");
                return true;
            }
            if (inference) {
                if (!"POST".equals(method)) {
                    return methodNotAllowed(response, callback, path, "POST");
                }
                handleInference(path, request, response, callback);
                return true;
            }
            switch (path) {
                case "/healthz":
                    return get(method, response, callback, path, () -> json(response, callback, 200, "{\"status\":\"ok\"}"));
                case "/readyz":
                    return get(method, response, callback, path, () -> readyz(response, callback));
                case "/metrics":
                    if (config.server().metricsPort() != null) {
                        return notFound(method, path, response, callback); // served on --metrics-port only
                    }
                    return get(method, response, callback, path, () -> MetricsHandler.scrape(metrics, response, callback));
                case "/v1/models":
                    return get(method, response, callback, path, () -> models(response, callback));
                case "/v1/loads":
                    return get(method, response, callback, path, () -> loads(response, callback));
                default:
                    return notFound(method, path, response, callback);
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

    private boolean notFound(String method, String path, Response response, Callback callback) {
        if (!claimUnknownPaths) {
            return false;
        }
        OpenAiErrors.send(response, callback, 404, "not_found_error", "no route for " + method + " " + path);
        return true;
    }

    /** The probes answer without the API key (as SGLang's router does): orchestrators call them unauthenticated. */
    private static boolean open(String path) {
        return "/healthz".equals(path) || "/readyz".equals(path);
    }

    /** Paths this handler answers itself besides inference and admin (embedded mode declines the rest). */
    private boolean owns(String path) {
        return "/v1/models".equals(path) || "/v1/loads".equals(path)
                || ("/metrics".equals(path) && config.server().metricsPort() == null);
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
        InferenceFrontDoor.JsonAnswer ready = frontDoor.readiness();
        json(response, callback, ready.status(), ready.body());
    }

    private void models(Response response, Callback callback) {
        json(response, callback, 200, frontDoor.modelsJson());
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

    private static void json(Response response, Callback callback, int status, String body) {
        response.setStatus(status);
        response.getHeaders().put(JSON_TYPE);
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }

    /** {@code path} is one of {@link InferenceFrontDoor#serves}'s. */
    private void handleInference(String path, Request request, Response response, Callback completion) {
        TraceSpan span = ctx.tracer().ingress("kvroute.request", name -> request.getHeaders().get(name))
                .tag("endpoint", path);
        AccessLog.attach(request, path, span);
        Callback callback = span == TraceSpan.NOOP ? completion : new TracedCompletion(completion, span, response);
        frontDoor.handle(path, request.getHeaders()::get,
                (maxBytes, sink) -> BodyReader.read(request, maxBytes, sink),
                new JettyClientSink(request, response, callback));
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
}
