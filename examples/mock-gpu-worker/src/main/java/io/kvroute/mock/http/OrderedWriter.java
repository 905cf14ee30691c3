package io.kvroute.mock.http;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Serializes asynchronous writes to one response: Jetty allows one pending write at a time, while
 * the engine emits tokens whenever it steps. Buffers queue here and go out one after another; the
 * engine thread never blocks. The first failed write (client gone) fires {@code onClientGone} once
 * and drops everything after it.
 */
final class OrderedWriter {

    private final Response response;
    private final Callback completion;
    private final Runnable onClientGone;
    private final ArrayDeque<ByteBuffer> pending = new ArrayDeque<>(); // guarded by this
    private boolean writing; // guarded by this
    private boolean lastQueued; // guarded by this
    private boolean failed; // guarded by this

    OrderedWriter(Response response, Callback completion, Runnable onClientGone) {
        this.response = response;
        this.completion = completion;
        this.onClientGone = onClientGone;
    }

    /** Queues {@code bytes}; {@code last} ends the response. */
    void write(ByteBuffer bytes, boolean last) {
        synchronized (this) {
            if (failed || lastQueued) {
                return;
            }
            pending.add(bytes);
            lastQueued = last;
            if (writing) {
                return;
            }
            writing = true;
        }
        writeNext();
    }

    private void writeNext() {
        ByteBuffer next;
        boolean last;
        synchronized (this) {
            next = pending.poll();
            if (next == null) {
                writing = false;
                return;
            }
            last = lastQueued && pending.isEmpty();
        }
        boolean isLast = last;
        response.write(isLast, next, Callback.from(() -> {
            if (isLast) {
                completion.succeeded();
            } else {
                writeNext();
            }
        }, failure -> {
            synchronized (this) {
                failed = true;
                pending.clear();
            }
            onClientGone.run();
            completion.failed(failure);
        }));
    }
}
