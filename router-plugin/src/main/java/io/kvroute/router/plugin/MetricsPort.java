package io.kvroute.router.plugin;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.http.MetricsHandler;
import io.kvroute.router.metrics.RouterMetrics;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * {@code --metrics-port}: a second Jetty connector on the same host that serves only
 * {@code GET /metrics}, so the scrape can stay on a private port while the main port is public
 * (and then keeps {@code /metrics} off the main port). Requests are told apart by the connector
 * they arrived on, not by a header a client could forge.
 */
final class MetricsPort {
    /** The connector's name; {@link RouterMain.RunningRouter#metricsUrl()} finds it by this. */
    static final String CONNECTOR_NAME = "kvroute-metrics";

    private MetricsPort() {}

    /**
     * Adds the metrics connector to {@code server} when {@code --metrics-port} is set and returns the
     * handler to install: {@code main} itself when unset, else a wrapper that answers the metrics
     * connector's requests with {@link MetricsHandler} and passes every other request to {@code main}.
     */
    static Handler install(Server server, RouterConfig config, RouterMetrics metrics, Handler main) {
        if (config.server().metricsPort() == null) {
            return main;
        }
        ServerConnector connector = new ServerConnector(server);
        connector.setName(CONNECTOR_NAME);
        connector.setHost(config.server().host());
        connector.setPort(config.server().metricsPort());
        server.addConnector(connector);
        return new ByConnector(main, connector, new MetricsHandler(metrics));
    }

    /** Routes the metrics connector's requests to the scrape handler, the rest to the wrapped one. */
    private static final class ByConnector extends Handler.Wrapper {
        private final Connector metricsConnector;
        private final Handler metricsHandler;

        ByConnector(Handler main, Connector metricsConnector, Handler metricsHandler) {
            super(main);
            this.metricsConnector = metricsConnector;
            this.metricsHandler = metricsHandler;
            addBean(metricsHandler);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            if (request.getConnectionMetaData().getConnector() == metricsConnector) {
                return metricsHandler.handle(request, response, callback);
            }
            return super.handle(request, response, callback);
        }
    }
}
