package io.kvroute.router.servlet;

import io.kvroute.router.dispatch.ErrorBodies;
import io.kvroute.router.ingress.InferenceFrontDoor;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The router as a Jakarta Servlet 6.0 servlet, a thin adapter over the same
 * {@link InferenceFrontDoor} and dispatch core as the Jetty handler: the OpenAI inference endpoints
 * (async: {@code startAsync}, a {@code ReadListener} for the body, a {@code WriteListener}-driven
 * {@link ServletClientSink} for the answer, SSE relayed chunk by chunk), plus {@code /healthz},
 * {@code /readyz}, {@code /v1/models} and {@code /metrics}. Paths are taken relative to the servlet
 * context, so the router can be deployed under any context path. Errors are OpenAI JSON errors.
 *
 * <p>The admin API and {@code /v1/loads} stay on the Jetty handler (they need the Jetty request).
 */
public final class RouterServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient InferenceFrontDoor frontDoor;
    private final transient Runnable onDestroy;

    public RouterServlet(InferenceFrontDoor frontDoor) {
        this(frontDoor, () -> { });
    }

    /** {@code onDestroy} runs when the container takes the servlet out of service (the drain). */
    public RouterServlet(InferenceFrontDoor frontDoor, Runnable onDestroy) {
        this.frontDoor = Objects.requireNonNull(frontDoor, "frontDoor");
        this.onDestroy = Objects.requireNonNull(onDestroy, "onDestroy");
    }

    @Override
    public void destroy() {
        onDestroy.run();
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        String method = request.getMethod();
        if (InferenceFrontDoor.serves(path)) {
            if (!"POST".equals(method)) {
                methodNotAllowed(response, path, "POST");
                return;
            }
            AsyncContext async = request.startAsync();
            async.setTimeout(0); // the upstream request and idle timeouts bound the exchange
            frontDoor.handle(path, request::getHeader, new ServletBodySource(request),
                    new ServletClientSink(async, response));
            return;
        }
        boolean get = "GET".equals(method) || "HEAD".equals(method);
        if (!path.equals("/healthz") && !path.equals("/readyz") && !frontDoor.acceptsApiKey(request.getHeader("Authorization"))) {
            // --api-key protects everything but the probes, here as on the Jetty handler (401 before 404)
            response.setHeader("WWW-Authenticate", "Bearer");
            error(response, 401, "a valid API key is required (Authorization: Bearer ...)");
            return;
        }
        switch (path) {
            case "/healthz":
                answer(response, get, path, 200, "application/json", "{\"status\":\"ok\"}");
                return;
            case "/readyz": {
                InferenceFrontDoor.JsonAnswer ready = frontDoor.readiness();
                answer(response, get, path, ready.status(), "application/json", ready.body());
                return;
            }
            case "/v1/models":
                answer(response, get, path, 200, "application/json", frontDoor.modelsJson());
                return;
            case "/metrics":
                answer(response, get, path, 200, "text/plain; version=0.0.4; charset=utf-8", frontDoor.scrape());
                return;
            default:
                error(response, 404, "no route for " + method + " " + path);
        }
    }

    private static void answer(HttpServletResponse response, boolean get, String path, int status, String type,
            String body) throws IOException {
        if (!get) {
            methodNotAllowed(response, path, "GET");
            return;
        }
        write(response, status, type, body.getBytes(StandardCharsets.UTF_8));
    }

    private static void methodNotAllowed(HttpServletResponse response, String path, String allowed) throws IOException {
        response.setHeader("Allow", allowed);
        error(response, 405, path + " only accepts " + allowed);
    }

    private static void error(HttpServletResponse response, int status, String message) throws IOException {
        write(response, status, "application/json", ErrorBodies.json(status, ErrorBodies.typeFor(status), message));
    }

    private static void write(HttpServletResponse response, int status, String type, byte[] body) throws IOException {
        response.setStatus(status);
        response.setContentType(type);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
