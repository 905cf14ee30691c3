/**
 * Jetty core handlers: {@link io.kvroute.router.http.RouterHandler} (endpoints, validation, errors)
 * and the streaming relay with backpressure ({@code ProxyExchange}).
 */
package io.kvroute.router.http;
