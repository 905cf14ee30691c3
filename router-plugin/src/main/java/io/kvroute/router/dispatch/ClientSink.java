package io.kvroute.router.dispatch;

import io.kvroute.router.accesslog.RouteFacts;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The client side of one exchange, implemented by each transport adapter (Jetty core, Servlet).
 * Used only through {@link Exchange}, which guarantees the call order: {@link #begin} at most once
 * and before any write; one write outstanding at a time; exactly one terminal call ({@link #end}
 * or {@link #abort}).
 */
public interface ClientSink {

    /** Sets the status and headers; nothing is sent until the first write or {@link #end}. */
    void begin(int status, Map<String, String> headers);

    /**
     * Writes one chunk and flushes it to the client. {@code done} succeeds once the chunk is
     * written (the next upstream chunk may then be demanded: backpressure), fails if the client
     * went away.
     */
    void write(ByteBuffer chunk, Completion done);

    /** Writes {@code last} (possibly empty) and completes the response. Terminal. */
    void end(ByteBuffer last);

    /** Ends the response abruptly (the client sees a truncated response or a reset). Terminal. */
    void abort(Throwable failure);

    /** Registers a listener for the client going away (connection closed, I/O error). */
    void onGone(Consumer<Throwable> listener);

    /** This request's routing facts and trace span (access log, tracing); detached when the transport keeps none. */
    default RouteFacts facts() {
        return RouteFacts.detached("");
    }
}
