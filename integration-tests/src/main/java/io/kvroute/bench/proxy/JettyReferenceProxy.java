package io.kvroute.bench.proxy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Jetty's own reverse proxy ({@link ProxyHandler.Reverse}, default client tuning) rotating over the
 * workers: the reference relay. It runs on the same server and HTTP client stack as
 * kvroute and does nothing else (no body read, no JSON, no routing, no metrics), so its throughput
 * is the ceiling for any relay built on that stack on this box, and the gap to kvroute is kvroute's
 * own work.
 */
final class JettyReferenceProxy implements AutoCloseable {
    private final Server server;
    private final ServerConnector connector;

    JettyReferenceProxy(List<String> workerUrls) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("jetty-reference-proxy");
        server = new Server(threads);
        connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        AtomicInteger next = new AtomicInteger();
        List<String> workers = List.copyOf(workerUrls);
        server.setHandler(new ProxyHandler.Reverse(request -> HttpURI.build(
                workers.get(Math.floorMod(next.getAndIncrement(), workers.size())) + request.getHttpURI().getPathQuery())));
        server.start();
    }

    String url(String path) {
        return "http://127.0.0.1:" + connector.getLocalPort() + path;
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
