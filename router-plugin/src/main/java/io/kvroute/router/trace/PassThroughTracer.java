package io.kvroute.router.trace;

import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Tracing off: creates nothing but, when the caller sent a {@code traceparent}, a tiny span that
 * forwards it (and {@code tracestate}) verbatim to every upstream request, so an engine's spans
 * still join the caller's trace. The cost is two header lookups per request.
 */
final class PassThroughTracer implements RequestTracer {

    static final PassThroughTracer INSTANCE = new PassThroughTracer();

    private PassThroughTracer() {}

    @Override
    public TraceSpan ingress(String name, Function<String, String> incomingHeaders) {
        String traceparent = incomingHeaders.apply(TRACEPARENT);
        return traceparent == null ? TraceSpan.NOOP : new Forwarding(traceparent, incomingHeaders.apply(TRACESTATE));
    }

    @Override
    public boolean enabled() {
        return false;
    }

    @Override
    public void close() {}

    /** Forwards the caller's context unchanged; every other operation is a no-op. */
    private static final class Forwarding extends InertSpan {
        private final String traceparent;
        private final String tracestate;

        Forwarding(String traceparent, String tracestate) {
            this.traceparent = traceparent;
            this.tracestate = tracestate;
        }

        @Override
        public void inject(BiConsumer<String, String> headers) {
            headers.accept(TRACEPARENT, traceparent);
            if (tracestate != null) {
                headers.accept(TRACESTATE, tracestate);
            }
        }
    }
}
