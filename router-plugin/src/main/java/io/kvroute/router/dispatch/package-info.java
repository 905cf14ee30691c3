/**
 * The transport-neutral dispatch core: everything that decides where a client request goes and
 * what happens when an attempt fails, with no Jetty or Servlet type in sight.
 *
 * <p>Start reading at {@link io.kvroute.router.dispatch.Dispatch} (one request over plain workers)
 * and {@link io.kvroute.router.dispatch.PdDispatch} (a prefill/decode pair with continuations).
 * Decisions are pure: {@link io.kvroute.router.dispatch.RetryRule} returns the next
 * {@link io.kvroute.router.dispatch.Step} from an attempt's facts, on an injected
 * {@link io.kvroute.router.dispatch.DispatchClock}. The client side is a
 * {@link io.kvroute.router.dispatch.ClientSink} (status and headers, writes with a completion that
 * carries backpressure, completion, abort, a client-gone listener) wrapped once per request in an
 * {@link io.kvroute.router.dispatch.Exchange}, whose terminal transition happens exactly once by
 * construction and reports one {@link io.kvroute.router.dispatch.RequestOutcome}. Every upstream
 * request is built in {@link io.kvroute.router.dispatch.UpstreamRequests} (the header hook) and sent
 * through the small {@link io.kvroute.router.dispatch.Upstream} interface.
 *
 * <p>The adapters live at the edge: {@code http.RouterHandler} (Jetty core, demand-driven) and
 * {@code servlet.RouterServlet} (Jakarta Servlet 6 async I/O).
 */
package io.kvroute.router.dispatch;
