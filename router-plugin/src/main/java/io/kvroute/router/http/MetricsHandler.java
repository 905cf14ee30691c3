package io.kvroute.router.http;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.metrics.RouterMetrics;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The Prometheus scrape alone, for the separate {@code --metrics-port} connector: {@code GET /metrics}
 * answers without an API key (the port is meant for a private network), every other path is a JSON
 * 404, so the inference and admin surface is never reachable through the metrics port.
 */
public final class MetricsHandler extends Handler.Abstract.NonBlocking {
    private final RouterMetrics metrics;

    public MetricsHandler(RouterMetrics metrics) {
        this.metrics = requireNonNull(metrics, "metrics");
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        if (!"/metrics".equals(path)) {
            OpenAiErrors.send(response, callback, 404, "not_found_error", "the metrics port serves only GET /metrics");
            return true;
        }
        String method = request.getMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET");
            OpenAiErrors.send(response, callback, 405, "method_not_allowed", "/metrics only accepts GET");
            return true;
        }
        scrape(metrics, response, callback);
        return true;
    }

    /** Writes the Prometheus text exposition of {@code metrics}. */
    static void scrape(RouterMetrics metrics, Response response, Callback callback) {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
        response.write(true, ByteBuffer.wrap(metrics.scrape().getBytes(StandardCharsets.UTF_8)), callback);
    }
}
