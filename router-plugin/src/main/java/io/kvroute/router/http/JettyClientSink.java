package io.kvroute.router.http;

import io.kvroute.router.accesslog.AccessLog;
import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.dispatch.ClientSink;
import io.kvroute.router.dispatch.Completion;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.function.Consumer;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.NanoTime;

/**
 * The dispatch core's {@link ClientSink} on Jetty's core API: writes are {@link Response#write}
 * with a callback (Jetty completes it once the bytes are flushed, which is the backpressure), the
 * terminal write completes the handler's {@link Callback}, and the client-gone signal is the request's
 * failure listener plus, until the answer begins, a {@link ClientCloseWatch} on HTTP/1 connections (which
 * notices a client that closes while no byte has been written, e.g. during a non-streaming generation).
 */
final class JettyClientSink implements ClientSink {

    private final Request request;
    private final Response response;
    private final Callback callback;
    private volatile ClientCloseWatch closeWatch;
    private volatile boolean clientClosed;

    JettyClientSink(Request request, Response response, Callback callback) {
        this.request = request;
        this.response = response;
        this.callback = callback;
    }

    @Override
    public void begin(int status, Map<String, String> headers) {
        disarm(); // from here on, a failed write is the signal
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
        response.write(true, last, callback);
    }

    @Override
    public void abort(Throwable failure) {
        disarm();
        // a departed client is routine: a quiet cause keeps Jetty from warning about the unwritable answer
        callback.failed(clientClosed ? new ClientCloseWatch.ClientClosed() : failure);
    }

    @Override
    public void onGone(Consumer<Throwable> listener) {
        request.addFailureListener(listener);
        if (closeWatch == null) {
            closeWatch = ClientCloseWatch.arm(request, failure -> {
                clientClosed = true;
                listener.accept(failure);
            });
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
