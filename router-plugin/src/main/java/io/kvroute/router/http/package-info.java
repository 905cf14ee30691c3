/**
 * The Jetty adapters: {@link io.kvroute.router.http.RouterHandler} (Jetty core handler: routes paths,
 * reads bodies with {@code BodyReader}, writes through {@code JettyClientSink}, answers probes, the admin
 * API and errors) over the transport-neutral {@code ingress.InferenceFrontDoor}, and the Jetty client side
 * of the {@code dispatch} core ({@code JettyUpstream}, {@code JettyClock}). Start reading at
 * {@code RouterHandler}; {@link io.kvroute.router.http.RouterContext} holds the router's collaborators.
 */
package io.kvroute.router.http;
