package io.kvroute.router.dispatch;

import java.nio.ByteBuffer;
import java.util.function.Function;

/**
 * The upstream side: sends one {@link UpstreamRequest} and streams the answer to a
 * {@link Listener}. The Jetty {@code HttpClient} implementation lives in {@code http}.
 */
public interface Upstream {

    Call send(UpstreamRequest request, Listener listener);

    /** An upstream request in flight. */
    interface Call {
        /** Aborts the request; the listener's {@link Listener#onComplete} still fires. */
        void abort(Throwable cause);
    }

    /** Callbacks for one upstream request, called serially. */
    interface Listener {

        /** The status line and headers arrived ({@code headers} looks a header up by name, null if absent). */
        void onHeaders(int status, Function<String, String> headers);

        /**
         * A chunk of the body. {@code chunk} stays valid until {@code done} is called; the next
         * chunk is demanded only when {@code done} succeeds (backpressure), and failing it aborts
         * the request.
         */
        void onContent(ByteBuffer chunk, Completion done);

        /** Exactly once: {@code failure} is null on success; {@code status} is 0 when no response arrived. */
        void onComplete(int status, Throwable failure);
    }
}
