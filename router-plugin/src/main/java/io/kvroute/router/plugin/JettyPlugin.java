package io.kvroute.router.plugin;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.eclipse.jetty.server.Server;

/**
 * ServiceLoader SPI through which a Jetty deployment picks kvroute up from its jar. A host lists
 * {@code META-INF/services/io.kvroute.router.plugin.JettyPlugin} providers on its classpath and
 * installs the ones its plugin config enables with {@link #installEnabled}. kvroute's own provider
 * is named {@code kvroute-router}.
 */
public interface JettyPlugin {

    /** The name used in plugin config to enable this plugin. */
    String name();

    /** Installs into {@code server}, reading the plugin's own config file. */
    void install(Server server, Path configFile);

    /**
     * Installs every provider found on the class path whose name appears in {@code enabled}
     * (plugin name to its config file). Returns the names installed.
     */
    static List<String> installEnabled(Server server, Map<String, Path> enabled) {
        List<String> installed = new ArrayList<>();
        for (JettyPlugin plugin : ServiceLoader.load(JettyPlugin.class)) {
            Path config = enabled.get(plugin.name());
            if (config != null) {
                plugin.install(server, config);
                installed.add(plugin.name());
            }
        }
        return installed;
    }
}
