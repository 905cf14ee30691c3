package io.kvroute.router.http;

import io.kvroute.router.accesslog.AccessLog;
import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.dispatch.ClientSink;
import io.kvroute.router.dispatch.Completion;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.NanoTime;

/**
 * The dispatch core's {@link ClientSink} on Jetty's core API: writes are {@link Response#write}
 * with a callback (Jetty completes it once the bytes are flushed, which is the backpressure), the
 * terminal write completes the handler's {@link Callback}, and the request's failure listener plus a
 * {@link ClientCloseWatch} on HTTP/1 connections are the client-gone signal (the watch notices a client
 * that closes while no byte has been written yet, e.g. during a non-streaming generation).
 */
final class JettyClientSink implements ClientSink {

    private final Request request;
    private final Response response;
    private final Callback callback;
    private volatile ClientCloseWatch closeWatch;
    /** Set by the watch when the client pipelined a request: this connection closes after the answer. */
    private final java.util.concurrent.atomic.AtomicBoolean closeAfter = new java.util.concurrent.atomic.AtomicBoolean();

    JettyClientSink(Request request, Response response, Callback callback) {
        this.request = request;
        this.response = response;
        this.callback = callback;
    }

    @Override
    public void begin(int status, Map<String, String> headers) {
        response.setStatus(status);
        headers.forEach(response.getHeaders()::put);
        AccessLog.factsOf(request).firstByte(NanoTime.since(request.getBeginNanoTime()));
    }

    @Override
    public void write(ByteBuffer chunk, Completion done) {
        response.write(false, chunk, Callback.from(done::succeeded, done::failed));
    }

    @Override
    public void end(ByteBuffer last) {
        disarm();
        if (closeAfter.get() && !response.isCommitted()) {
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
        }
        response.write(true, last, callback);
    }

    @Override
    public void abort(Throwable failure) {
        disarm();
        callback.failed(failure);
    }

    @Override
    public void onGone(Consumer<Throwable> listener) {
        request.addFailureListener(listener);
        if (closeWatch == null) {
            closeWatch = ClientCloseWatch.arm(request, listener, () -> closeAfter.set(true));
        }
    }

    private void disarm() {
        ClientCloseWatch watch = closeWatch;
        if (watch != null) {
            watch.disarm();
        }
    }

    @Override
    public RouteFacts facts() {
        return AccessLog.factsOf(request);
    }
}
