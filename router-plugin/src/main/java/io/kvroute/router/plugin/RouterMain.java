package io.kvroute.router.plugin;

import io.kvroute.router.accesslog.AccessLog;
import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.RouterOptions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvroute.router.trace.RequestTracer;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** The standalone router process: {@code java -cp ... io.kvroute.router.plugin.RouterMain --worker-urls ...}. */
public final class RouterMain {

    /** A started standalone router. */
    public static final class RunningRouter implements AutoCloseable {
        private final Server server;
        private final KvRouter router;
        private final String baseUrl;

        RunningRouter(Server server, KvRouter router, String baseUrl) {
            this.server = server;
            this.router = router;
            this.baseUrl = baseUrl;
        }

        /** e.g. {@code http://127.0.0.1:30000} */
        public String baseUrl() {
            return baseUrl;
        }

        public KvRouter router() {
            return router;
        }

        public Server server() {
            return server;
        }

        /** The {@code --metrics-port} connector's base URL, or null when {@code /metrics} is on the main port. */
        public String metricsUrl() {
            for (Connector c : server.getConnectors()) {
                if (MetricsPort.CONNECTOR_NAME.equals(c.getName()) && c instanceof ServerConnector sc) {
                    return baseUrl.substring(0, baseUrl.lastIndexOf(':') + 1) + sc.getLocalPort();
                }
            }
            return null;
        }

        /** Drains (see {@link KvRouter#drain()}), then stops the server. */
        @Override
        public void close() {
            try {
                router.drain();
                server.stop();
            } catch (Exception e) {
                throw new IllegalStateException("router did not stop cleanly", e);
            }
        }
    }

    private RouterMain() {}

    /** Parses flags, starts the server, and returns once it is listening. */
    public static RunningRouter start(String... args) throws Exception {
        return start(RouterOptions.parse(args));
    }

    public static RunningRouter start(RouterConfig config) throws Exception {
        return start(config, KvRouter.create(config));
    }

    /** {@link #start(RouterConfig)} with the API client {@code --service-discovery} uses (null: fabric8's default). */
    public static RunningRouter start(RouterConfig config, KubernetesClient kubernetes) throws Exception {
        return start(config, KvRouter.create(config, kubernetes));
    }

    /** Tests: a router tracing through {@code tracer} (e.g. into the SDK's in-memory exporter). */
    public static RunningRouter start(RequestTracer tracer, String... args) throws Exception {
        RouterConfig config = RouterOptions.parse(args);
        return start(config, KvRouter.create(config, tracer));
    }

    /** The standalone server around {@code router} (tests hand in a router on a fake clock). */
    static RunningRouter start(RouterConfig config, KvRouter router) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(400, 8);
        threads.setName("kvroute-router");
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setOutputAggregationSize(0);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost(config.server().host());
        connector.setPort(config.server().port());
        connector.setIdleTimeout(Math.max(30_000L, config.timeouts().requestMillis()));
        server.addConnector(connector);
        server.setHandler(MetricsPort.install(server, config, router.metrics(), router.handler(true)));
        server.setErrorHandler(new io.kvroute.router.http.JsonErrorHandler());
        server.addBean(router);
        if (config.observability().accessLog() != null) {
            server.setRequestLog(AccessLog.forTarget(config.observability().accessLog()));
        }
        server.setStopTimeout(30_000);
        server.start();
        String host = config.server().host().contains(":") ? "[" + config.server().host() + "]" : config.server().host();
        return new RunningRouter(server, router, "http://" + host + ":" + connector.getLocalPort());
    }

    public static void main(String[] args) throws Exception {
        if (RouterOptions.printHelpIfRequested(new java.io.PrintWriter(System.out, true), args)) {
            return; // --help / --version: usage printed, exit 0, no server
        }
        RunningRouter running;
        try {
            running = start(args);
        } catch (ConfigException e) {
            System.err.println("kvroute-router: " + e.getMessage());
            System.exit(2);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(running::close, "kvroute-shutdown"));
        System.out.println("kvroute router listening on " + running.baseUrl());
        running.server().join();
    }
}
