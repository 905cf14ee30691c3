package io.kvroute.it;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A worker that is healthy (GET /health, /server_info with a model id) but answers every inference
 * POST 503, on a real Jetty server on a loopback ephemeral port: the retry, breaker and exhausted-retry
 * paths, driven by a real upstream. It records the {@code traceparent} of the last POST it saw.
 */
final class FailingWorker implements AutoCloseable {

    private final Server server = new Server();
    final AtomicInteger posts = new AtomicInteger();
    volatile String lastTraceparent;

    FailingWorker(String modelId) throws Exception {
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String path = Request.getPathInContext(request);
                String body;
                if ("POST".equals(request.getMethod())) {
                    posts.incrementAndGet();
                    lastTraceparent = request.getHeaders().get("traceparent");
                    response.setStatus(503);
                    body = "{\"error\":{\"message\":\"overloaded\",\"type\":\"service_unavailable\",\"code\":503}}";
                } else if (path.equals("/server_info")) {
                    body = "{\"model_id\":\"" + modelId + "\"}";
                } else {
                    body = "{}";
                }
                response.getHeaders().put("content-type", "application/json");
                response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
