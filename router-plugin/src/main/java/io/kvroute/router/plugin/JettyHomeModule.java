package io.kvroute.router.plugin;

import io.kvroute.router.config.ConfigFile;
import java.util.Map;
import org.eclipse.jetty.server.Server;

/**
 * The entry point of the {@code kvroute-router} jetty-home module: {@code etc/kvroute-router.xml}
 * calls {@link #mount(Server, Map)} with every {@code kvroute.*} property of the Jetty base (unset
 * ones as null). The properties go through {@link ConfigFile#fromProperties}, so a Jetty base is
 * configured with exactly the flags, defaults and validation of the standalone router; an invalid
 * value fails Jetty's start with a message naming the key.
 */
public final class JettyHomeModule {

    private JettyHomeModule() {}

    /** Builds the router from {@code properties} and mounts it in front of the server's handlers. */
    public static KvRouter mount(Server server, Map<String, String> properties) {
        return KvRouter.mount(server, ConfigFile.fromProperties(properties));
    }
}
