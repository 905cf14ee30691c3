package io.kvroute.examples.war;

import io.kvroute.router.servlet.ServletDeployment;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import java.util.Set;

/**
 * Registers the kvroute router servlet when the container starts the web application (found through
 * {@code META-INF/services/jakarta.servlet.ServletContainerInitializer}). Containers that do not
 * run initializers without annotation scanning (Jetty without its {@code ee10-annotations} module)
 * deploy through {@link KvRouteListener} instead; deployment is idempotent, so both may run.
 */
public final class KvRouteInitializer implements ServletContainerInitializer {

    @Override
    public void onStartup(Set<Class<?>> classes, ServletContext context) {
        ServletDeployment.deploy(context);
    }
}
