package io.kvroute.router;

import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** A real Jetty server on 127.0.0.1 and a free port, for tests that need a worker to talk to. */
public final class LoopbackServer {

    private LoopbackServer() {}

    /** Starts a server running {@code handler}; the caller stops it. */
    public static Server start(Handler handler) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(handler);
        server.start();
        return server;
    }

    /** {@code http://127.0.0.1:PORT} of a server {@link #start} started. */
    public static String url(Server server) {
        return "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }
}
