/**
 * Packaging: {@link io.kvroute.router.plugin.KvRouter} (a Jetty lifecycle component with one core
 * handler; {@code KvRouter.mount(server, config)} embeds it), the standalone
 * {@link io.kvroute.router.plugin.RouterMain}, and ServiceLoader discovery through
 * {@link io.kvroute.router.plugin.JettyPlugin}.
 */
package io.kvroute.router.plugin;
