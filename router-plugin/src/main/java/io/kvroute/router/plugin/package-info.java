/**
 * Packaging: {@link io.kvroute.router.plugin.KvRouter} (a Jetty lifecycle component with one core
 * handler; {@code KvRouter.mount(server, config)} embeds it), the jetty-home module's entry point
 * {@link io.kvroute.router.plugin.JettyHomeModule} (called from {@code etc/kvroute-router.xml}), and
 * the standalone {@link io.kvroute.router.plugin.RouterMain}.
 */
package io.kvroute.router.plugin;
