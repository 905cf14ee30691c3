package io.kvroute.router.trace;

import java.util.function.BiConsumer;

/** A span that records nothing: children are itself, tags and ends are ignored. Subclasses may propagate. */
class InertSpan implements TraceSpan {

    @Override
    public TraceSpan child(String name) {
        return this;
    }

    @Override
    public TraceSpan clientChild(String name) {
        return this;
    }

    @Override
    public TraceSpan childAt(String name, long startEpochNanos) {
        return this;
    }

    @Override
    public TraceSpan tag(String key, String value) {
        return this;
    }

    @Override
    public TraceSpan tag(String key, long value) {
        return this;
    }

    @Override
    public TraceSpan error(String message) {
        return this;
    }

    @Override
    public void inject(BiConsumer<String, String> headers) {}

    @Override
    public String traceId() {
        return null;
    }

    @Override
    public void end() {}

    @Override
    public void endAt(long epochNanos) {}
}
