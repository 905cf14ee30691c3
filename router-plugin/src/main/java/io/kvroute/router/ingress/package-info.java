/**
 * The request path from bytes to a routing request, transport-neutral: admission (draining, tracked by
 * {@code ActiveRequests}; the API key, {@code BearerAuth}, or the tenant; content type), the size-limited body read through the adapter's {@code BodySource}, one parse
 * ({@code RequestJson}), validation of the fields the router reads ({@code BodyProbe}, {@code Endpoint}),
 * sanitizing, model resolution, ingress tokenization ({@code IngressTokenization}), then the route handed to
 * the {@code dispatch} core, under the tenant layer's rate limits and queue when configured
 * ({@code TenantFrontDoor}, {@code QosClientSink}). Rejections are {@code ApiException}s, answered as OpenAI
 * JSON errors with a precise status.
 *
 * <p>No Jetty and no Servlet API here ({@code IngressPackageBoundaryTest} reads the sources to keep it so):
 * {@code http/} adapts Jetty and {@code servlet/} the Servlet API to this package, translating I/O only for
 * the inference endpoints (the Jetty adapter also serves the admin API and {@code /v1/loads}). Start reading at
 * {@link io.kvroute.router.ingress.InferenceFrontDoor}. The composition root ({@code plugin.KvRouter}) hands it
 * the collaborators it uses, the dispatch core's Jetty-built upstream and clock among them, behind their
 * transport-neutral interfaces.
 */
package io.kvroute.router.ingress;
