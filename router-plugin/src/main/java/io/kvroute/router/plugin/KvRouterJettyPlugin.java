package io.kvroute.router.plugin;

import java.nio.file.Path;
import org.eclipse.jetty.server.Server;

/** kvroute's {@link JettyPlugin} provider: mounts the router from its YAML config file. */
public final class KvRouterJettyPlugin implements JettyPlugin {

    @Override
    public String name() {
        return "kvroute-router";
    }

    @Override
    public void install(Server server, Path configFile) {
        KvRouter.mount(server, configFile);
    }
}
