package io.kvroute.router.dispatch;

import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import java.util.Map;

/**
 * Adds headers to every upstream request (plain, streaming, PD prefill, PD decode, continuation,
 * retries), e.g. W3C {@code traceparent}. Called on the dispatching thread; must not block.
 */
@FunctionalInterface
public interface UpstreamHook {

    /**
     * @param target what the request is for
     * @param headers the request's headers so far; the hook may add or replace entries
     */
    void decorate(Target target, Map<String, String> headers);

    /**
     * @param hop which hop
     * @param worker the worker it goes to
     * @param path the endpoint path
     * @param attempt 1-based attempt number of the client request
     * @param segment PD segment index (0 for the first segment and for plain dispatch)
     * @param span the trace span of this very call ({@link TraceSpan#NOOP} when not traced)
     */
    record Target(Failure.Hop hop, Worker worker, String path, int attempt, int segment, TraceSpan span) {}
}
