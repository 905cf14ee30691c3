/**
 * The Jakarta Servlet 6.0 adapter: {@link io.kvroute.router.servlet.RouterServlet} serves the same
 * endpoints as the Jetty handler over the same transport-neutral front door and dispatch core,
 * with async I/O ({@code startAsync}, {@code ReadListener}, {@code WriteListener}).
 * {@link io.kvroute.router.servlet.ServletDeployment} resolves the config of a web application and
 * registers the servlet; start reading there.
 */
package io.kvroute.router.servlet;
