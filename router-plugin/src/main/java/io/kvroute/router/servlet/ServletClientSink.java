package io.kvroute.router.servlet;

import io.kvroute.router.dispatch.ClientSink;
import io.kvroute.router.dispatch.Completion;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The dispatch core's {@link ClientSink} on Servlet 6 non-blocking output. Each chunk goes through
 * three steps, each taken only when {@link ServletOutputStream#isReady()} says so: write, flush (so
 * an SSE event leaves at once instead of waiting in the container's buffer), then the completion
 * succeeds and the core demands the next upstream chunk. When the socket is full, {@code isReady()}
 * is false and the container calls {@link #onWritePossible} later: that is the backpressure from the
 * client's socket to the upstream. The last chunk completes the {@link AsyncContext}.
 *
 * <p>Client gone: a write or flush that throws, {@link WriteListener#onError} or
 * {@link AsyncListener#onError} fires the gone listeners once and fails the pending completion.
 *
 * <p>Threading: one chunk is outstanding at a time (the core guarantees it); the step machine is
 * guarded by this object and driven from the dispatching thread and the container's
 * {@code onWritePossible}. Non-blocking writes happen under the lock (they never block); completions
 * and listeners run after leaving it.
 */
final class ServletClientSink implements ClientSink, WriteListener, AsyncListener {

    private enum Stage { IDLE, WRITE, FLUSH, DONE }

    private final AsyncContext async;
    private final HttpServletResponse response;
    private final List<Consumer<Throwable>> goneListeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean goneFired = new AtomicBoolean();
    private final AtomicBoolean completed = new AtomicBoolean();

    private ServletOutputStream out; // guarded by this
    private Stage stage = Stage.IDLE; // guarded by this
    private byte[] pendingBytes; // guarded by this
    private Completion pendingDone; // guarded by this
    private boolean pendingLast; // guarded by this

    ServletClientSink(AsyncContext async, HttpServletResponse response) {
        this.async = async;
        this.response = response;
        async.addListener(this);
    }

    @Override
    public void begin(int status, Map<String, String> headers) {
        response.setStatus(status);
        headers.forEach(response::setHeader);
    }

    @Override
    public void write(ByteBuffer chunk, Completion done) {
        enqueue(chunk, done, false);
    }

    @Override
    public void end(ByteBuffer last) {
        enqueue(last, null, true);
    }

    @Override
    public void abort(Throwable failure) {
        // The Servlet API cannot reset a connection: completing is the closest (a gone client sees nothing).
        completeAsync();
    }

    @Override
    public void onGone(Consumer<Throwable> listener) {
        goneListeners.add(listener);
    }

    private void enqueue(ByteBuffer chunk, Completion done, boolean last) {
        byte[] bytes = new byte[chunk.remaining()];
        chunk.get(bytes);
        boolean start;
        synchronized (this) {
            if (stage != Stage.IDLE) {
                throw new IllegalStateException("a write is already pending in stage " + stage);
            }
            pendingBytes = bytes;
            pendingDone = done;
            pendingLast = last;
            stage = Stage.WRITE;
            start = out == null;
        }
        if (start) {
            try {
                ServletOutputStream stream = response.getOutputStream();
                synchronized (this) {
                    out = stream;
                }
                stream.setWriteListener(this); // the container calls onWritePossible when ready
            } catch (IOException | RuntimeException e) {
                onError(e);
            }
            return;
        }
        advance();
    }

    @Override
    public void onWritePossible() {
        advance();
    }

    /** Runs the step machine as far as the output allows; completions run after the lock. */
    private void advance() {
        Completion done = null;
        boolean finish = false;
        try {
            synchronized (this) {
                while (out != null && stage != Stage.IDLE && out.isReady()) {
                    if (stage == Stage.WRITE) {
                        if (pendingBytes.length > 0) {
                            out.write(pendingBytes);
                        }
                        pendingBytes = null;
                        stage = Stage.FLUSH;
                    } else if (stage == Stage.FLUSH) {
                        out.flush();
                        stage = Stage.DONE;
                    } else {
                        done = pendingDone;
                        finish = pendingLast;
                        pendingDone = null;
                        stage = Stage.IDLE;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            onError(e);
            return;
        }
        if (finish) {
            completeAsync();
        } else if (done != null) {
            done.succeeded();
        }
    }

    @Override
    public void onError(Throwable failure) {
        Completion done;
        synchronized (this) {
            done = pendingDone;
            pendingDone = null;
            pendingBytes = null;
            stage = Stage.IDLE;
        }
        fireGone(failure);
        if (done != null) {
            done.failed(failure);
        }
        completeAsync();
    }

    private void fireGone(Throwable failure) {
        if (goneFired.compareAndSet(false, true)) {
            for (Consumer<Throwable> listener : goneListeners) {
                listener.accept(failure);
            }
        }
    }

    private void completeAsync() {
        if (completed.compareAndSet(false, true)) {
            try {
                async.complete();
            } catch (IllegalStateException alreadyDone) {
                // the container already completed or recycled the request (client gone)
            }
        }
    }

    @Override
    public void onComplete(AsyncEvent event) {
        completed.set(true);
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        onError(new IOException("async timeout"));
    }

    @Override
    public void onError(AsyncEvent event) {
        onError(event.getThrowable() == null ? new IOException("client connection failed") : event.getThrowable());
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        // not re-dispatched
    }
}
