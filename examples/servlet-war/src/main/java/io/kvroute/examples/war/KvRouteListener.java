package io.kvroute.examples.war;

import io.kvroute.router.servlet.ServletDeployment;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;

/**
 * Declared in {@code WEB-INF/web.xml}: deploys the router if {@link KvRouteInitializer} has not
 * already, and stops it (graceful drain) when the web application is undeployed.
 */
public final class KvRouteListener implements ServletContextListener {

    @Override
    public void contextInitialized(ServletContextEvent event) {
        ServletDeployment.deploy(event.getServletContext());
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        ServletDeployment.undeploy(event.getServletContext());
    }
}
