/**
 * The Jetty adapters: {@link io.kvroute.router.http.RouterHandler} (Jetty core handler: routes paths,
 * reads bodies with {@code BodyReader}, writes through {@code JettyClientSink}, answers probes, the admin
 * API and errors) over the transport-neutral {@code ingress.InferenceFrontDoor}, and the Jetty client side
 * of the {@code dispatch} core ({@code JettyUpstream}, {@code JettyClock}, built through
 * {@link io.kvroute.router.http.JettyTransport}). Start reading at {@code RouterHandler};
 * {@link io.kvroute.router.http.RouterContext} holds what the handler and the admin API read.
 */
package io.kvroute.router.http;
