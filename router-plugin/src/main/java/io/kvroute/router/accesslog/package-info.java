/**
 * The structured access log: one JSON line per inference request with the routing decision.
 *
 * <p>Start with {@link io.kvroute.router.accesslog.RouteFacts}, the per-request record the dispatch
 * code fills in (as a request attribute), then {@link io.kvroute.router.accesslog.AccessLog}, Jetty's
 * {@code RequestLog} that turns it into a line when the response completes.
 */
package io.kvroute.router.accesslog;
