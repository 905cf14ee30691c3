package io.kvroute.examples.embedded;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.plugin.KvRouter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * How an existing Jetty 12 server mounts the kvroute router with one call. The host keeps its own
 * handler (here a {@code /hello} page); the router serves the OpenAI endpoints, {@code /healthz},
 * {@code /readyz} and {@code /metrics} in front of it and declines every other path.
 *
 * <pre>java -cp ... io.kvroute.examples.embedded.EmbeddedJettyExample http://127.0.0.1:30001</pre>
 */
public final class EmbeddedJettyExample {

    private EmbeddedJettyExample() {}

    /** The host application's own handler: it knows nothing about kvroute. */
    static Handler hostApplication() {
        return new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                if (!"/hello".equals(Request.getPathInContext(request))) {
                    return false;
                }
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
                response.write(true, ByteBuffer.wrap("hello from the host app\n".getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        };
    }

    /** Builds the host server with the router mounted; the caller starts it. */
    public static Server build(int port, List<String> workerUrls) {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);
        server.setHandler(hostApplication());

        // The one call: the router goes in front of the existing handler and follows its lifecycle.
        KvRouter.mount(server, RouterConfig.builder().workerUrls(workerUrls).policy("power_of_two").build());
        return server;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: EmbeddedJettyExample WORKER_URL[,WORKER_URL...]");
            System.exit(2);
        }
        Server server = build(8080, List.of(args[0].split(",")));
        server.start();
        System.out.println("host app with kvroute on http://127.0.0.1:8080 (try /hello and /v1/chat/completions)");
        server.join();
    }
}
