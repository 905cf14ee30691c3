package io.kvroute.router.http;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpVersion;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.io.AbstractEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices an HTTP/1.x client that closes its connection while the router waits for the worker's answer.
 *
 * <p>Why: once the request body has been read, Jetty reads nothing more from an HTTP/1 connection until the
 * response is written, so a client that goes away during a non-streaming request is only noticed when the
 * answer is written, after the engine has generated every token for nobody. (A streaming request notices on
 * its next failed write; HTTP/2 resets the stream, which Jetty reports through the request's failure
 * listeners.) This watch registers fill interest on the connection's endpoint: the selector calls back when
 * the socket becomes readable, and a read of end-of-stream means the client is gone.
 *
 * <p>Bytes instead of end-of-stream mean the client pipelined its next request behind this one, which the
 * OpenAI clients, curl and browsers never do for POSTs. They cannot be handed back to Jetty's parser, so the
 * watch stops, says so at debug level, and the client sees its connection close after this answer (RFC 9112
 * section 9.3.2: a client that pipelines must be ready to retry on a closed connection).
 *
 * <p>The watch must be {@link #disarm disarmed} before the response completes: on a kept-alive connection Jetty
 * then registers its own fill interest for the next request, and a second reader would break the connection.
 *
 * <p>Threading: armed once per request by the adapter and disarmed by it; the callback runs on a Jetty thread.
 */
final class ClientCloseWatch {

    private static final Logger LOG = LoggerFactory.getLogger(ClientCloseWatch.class);
    /** The cause handed to the watch's own callback when it is disarmed; never reported as the client's. */
    private static final IOException DISARMED = new IOException("close watch disarmed");
    /** A watch that watches nothing (HTTP/2, no endpoint, or the connection already had a reader). */
    static final ClientCloseWatch NONE = new ClientCloseWatch(null);

    private final AbstractEndPoint endPoint;
    private final AtomicBoolean disarmed = new AtomicBoolean();

    private ClientCloseWatch(AbstractEndPoint endPoint) {
        this.endPoint = endPoint;
    }

    /** Removes the watch's fill interest; idempotent. Call before the response's last write. */
    void disarm() {
        if (endPoint != null && disarmed.compareAndSet(false, true)) {
            endPoint.getFillInterest().onFail(DISARMED);
        }
    }

    /**
     * Arms the watch for {@code request}; {@code gone} receives the failure once when the client closed. A no-op
     * for HTTP/2 and HTTP/3 (streams are reset and reported by Jetty itself) and when the connection already has a
     * reader.
     */
    static ClientCloseWatch arm(Request request, Consumer<Throwable> gone, Runnable pipelined) {
        HttpVersion version = request.getConnectionMetaData().getHttpVersion();
        if (version != HttpVersion.HTTP_1_1 && version != HttpVersion.HTTP_1_0) {
            return NONE;
        }
        Connection connection = request.getConnectionMetaData().getConnection();
        if (connection == null || !(connection.getEndPoint() instanceof AbstractEndPoint endPoint)) {
            return NONE;
        }
        ClientCloseWatch watch = new ClientCloseWatch(endPoint);
        boolean armed = endPoint.tryFillInterested(new Callback() {
            @Override
            public void succeeded() {
                if (watch.disarmed.get()) {
                    return;
                }
                ByteBuffer probe = ByteBuffer.allocate(1);
                probe.flip();
                try {
                    int read = endPoint.fill(probe);
                    if (read < 0) {
                        watch.disarmed.set(true);
                        gone.accept(new EOFException("the client closed the connection"));
                    } else if (read == 0 && endPoint.isOpen()) {
                        endPoint.tryFillInterested(this); // spurious wake-up: keep watching
                    } else if (read > 0) {
                        LOG.debug("client pipelined a request behind a pending answer; closing after it");
                        watch.disarmed.set(true);
                        pipelined.run();
                    }
                } catch (IOException e) {
                    watch.disarmed.set(true);
                    gone.accept(e);
                }
            }

            @Override
            public void failed(Throwable cause) {
                if (cause != DISARMED && watch.disarmed.compareAndSet(false, true)) {
                    gone.accept(cause);
                }
            }

            @Override
            public InvocationType getInvocationType() {
                return InvocationType.NON_BLOCKING;
            }
        });
        return armed ? watch : NONE;
    }
}
