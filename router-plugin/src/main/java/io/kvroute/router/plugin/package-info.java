/**
 * Packaging and wiring: {@link io.kvroute.router.plugin.KvRouter} (a Jetty lifecycle component with one
 * core handler; {@code KvRouter.mount(server, config)} embeds it), {@code RouterAssembly} (the
 * composition root: the one place the object graph is built; start reading there to see what is handed
 * to whom) with its parts {@code RouterPolicies}, {@code LoadFeeds} and {@code KvEventsWiring}, the
 * jetty-home module's entry point
 * {@link io.kvroute.router.plugin.JettyHomeModule} (called from {@code etc/kvroute-router.xml}), and
 * the standalone {@link io.kvroute.router.plugin.RouterMain}.
 */
package io.kvroute.router.plugin;
