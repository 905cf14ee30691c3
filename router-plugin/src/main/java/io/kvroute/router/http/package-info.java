/**
 * Jetty core handlers: {@link io.kvroute.router.http.RouterHandler} (endpoints, validation, errors)
 * and the adapters to the transport-neutral {@code dispatch} core ({@code InferenceFrontDoor},
 * {@code JettyClientSink}, {@code JettyUpstream}).
 */
package io.kvroute.router.http;
