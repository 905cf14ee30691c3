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
 * terminal write completes the handler's {@link Callback}, and the request's failure listener is
 * the client-gone signal.
 */
final class JettyClientSink implements ClientSink {

    private final Request request;
    private final Response response;
    private final Callback callback;

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
        response.write(true, last, callback);
    }

    @Override
    public void abort(Throwable failure) {
        callback.failed(failure);
    }

    @Override
    public void onGone(Consumer<Throwable> listener) {
        request.addFailureListener(listener);
    }

    @Override
    public RouteFacts facts() {
        return AccessLog.factsOf(request);
    }
}
