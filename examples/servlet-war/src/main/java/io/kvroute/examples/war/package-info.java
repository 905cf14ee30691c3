/**
 * The kvroute WAR: {@link io.kvroute.examples.war.KvRouteInitializer} (a
 * {@code ServletContainerInitializer}) or {@link io.kvroute.examples.war.KvRouteListener} (declared
 * in {@code web.xml}) hands the context to {@code io.kvroute.router.servlet.ServletDeployment},
 * which reads the YAML config and registers the router servlet on {@code /*}.
 */
package io.kvroute.examples.war;
