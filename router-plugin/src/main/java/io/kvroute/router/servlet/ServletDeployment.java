package io.kvroute.router.servlet;

import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.plugin.KvRouter;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deploys the router into a servlet context: resolves its YAML config, creates and starts a
 * {@link KvRouter} (its own upstream client, health checks and load plane), registers a
 * {@link RouterServlet} on {@code /*} with async support; {@link #undeploy} stops the router
 * (graceful drain) when the context is destroyed.
 *
 * <p>Config lookup, first match wins: the context init-param {@value #CONFIG_KEY} (a YAML path),
 * the system property {@value #CONFIG_KEY}, then {@code WEB-INF/kvroute.yaml}. A missing or invalid
 * config throws a {@link ConfigException} naming the key (and, for a bad value, the flag), which
 * fails the deployment.
 */
public final class ServletDeployment {

    /** The init-param and system property naming the YAML config file. */
    public static final String CONFIG_KEY = "kvroute.config";
    /** The config file a web application may carry. */
    public static final String BUNDLED_CONFIG = "/WEB-INF/kvroute.yaml";
    /** The context attribute holding the deployed {@link KvRouter}. */
    public static final String ROUTER_ATTRIBUTE = "io.kvroute.router";

    private static final Logger LOG = LoggerFactory.getLogger(ServletDeployment.class);

    private ServletDeployment() {}

    /**
     * Resolves the config, starts the router and registers the servlet; returns the router. Idempotent
     * per context (the router is kept in the context attribute {@value #ROUTER_ATTRIBUTE}), so a
     * web application may call it from both a {@code ServletContainerInitializer} and a
     * {@code web.xml} listener: whichever the container runs first deploys.
     */
    public static synchronized KvRouter deploy(ServletContext context) {
        Object existing = context.getAttribute(ROUTER_ATTRIBUTE);
        if (existing instanceof KvRouter router) {
            return router;
        }
        RouterConfig config = resolveConfig(context);
        refuseHostOnlySettings(config);
        KvRouter router = KvRouter.create(config);
        try {
            router.start();
        } catch (Exception e) {
            throw new IllegalStateException("kvroute router failed to start: " + e.getMessage(), e);
        }
        ServletRegistration.Dynamic servlet = context.addServlet("kvroute-router", new RouterServlet(router.frontDoor(),
                () -> drainQuietly(router)));
        servlet.setAsyncSupported(true);
        servlet.addMapping("/*");
        servlet.setLoadOnStartup(1);
        context.setAttribute(ROUTER_ATTRIBUTE, router);
        LOG.info("kvroute router deployed at context '{}' with {} worker(s)", context.getContextPath(),
                router.workers().fleet().all().size());
        return router;
    }

    /** Stops the context's router (graceful drain, bounded by {@code --shutdown-drain-secs}); idempotent. */
    public static synchronized void undeploy(ServletContext context) {
        Object existing = context.getAttribute(ROUTER_ATTRIBUTE);
        context.removeAttribute(ROUTER_ATTRIBUTE);
        if (existing instanceof KvRouter router) {
            try {
                router.stop();
            } catch (Exception e) {
                LOG.warn("kvroute router did not stop cleanly", e);
            }
        }
    }

    /**
     * Settings that only a router owning its Jetty server can honour fail the deployment instead of
     * being silently ignored: a second port for {@code /metrics}, and the access log (a Jetty request
     * log; in a container, use the container's own, such as Tomcat's {@code AccessLogValve}).
     */
    static void refuseHostOnlySettings(RouterConfig config) {
        if (config.server().metricsPort() != null) {
            throw new ConfigException("--metrics-port (metrics-port) is not supported in a servlet container: the "
                    + "web application cannot open a port; /metrics is served under the context path");
        }
        if (config.observability().accessLog() != null) {
            throw new ConfigException("--access-log (access-log) is not supported in a servlet container: use the "
                    + "container's access log (Tomcat: AccessLogValve; Jetty: the requestlog module)");
        }
    }

    private static void drainQuietly(KvRouter router) {
        try {
            router.drain();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The router config for {@code context}; throws a {@link ConfigException} naming the key on any problem. */
    public static RouterConfig resolveConfig(ServletContext context) {
        String param = context.getInitParameter(CONFIG_KEY);
        if (param != null && !param.isBlank()) {
            return load(Path.of(param.trim()), "context init-param " + CONFIG_KEY);
        }
        String property = System.getProperty(CONFIG_KEY);
        if (property != null && !property.isBlank()) {
            return load(Path.of(property.trim()), "system property " + CONFIG_KEY);
        }
        try (InputStream bundled = context.getResourceAsStream(BUNDLED_CONFIG)) {
            if (bundled == null) {
                throw new ConfigException("no kvroute config: set the context init-param " + CONFIG_KEY
                        + " or the system property " + CONFIG_KEY + " to a YAML file, or bundle " + BUNDLED_CONFIG);
            }
            Path copy = Files.createTempFile("kvroute-", ".yaml");
            try {
                Files.copy(bundled, copy, StandardCopyOption.REPLACE_EXISTING);
                return load(copy, BUNDLED_CONFIG);
            } finally {
                Files.deleteIfExists(copy);
            }
        } catch (IOException e) {
            throw new ConfigException(BUNDLED_CONFIG + " cannot be read: " + e.getMessage(), e);
        }
    }

    private static RouterConfig load(Path file, String source) {
        if (!Files.isRegularFile(file)) {
            throw new ConfigException(source + " names '" + file + "', which is not a readable file");
        }
        try {
            return RouterOptions.parse("--config", file.toString());
        } catch (ConfigException e) {
            throw new ConfigException(source + " ('" + file + "'): " + e.getMessage(), e);
        }
    }
}
