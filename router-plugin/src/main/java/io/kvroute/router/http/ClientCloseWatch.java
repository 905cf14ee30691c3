package io.kvroute.router.http;

import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices an HTTP/1.x client that closes its connection while the router waits for the worker's
 * first byte, so the upstream request is aborted and the engine stops generating for nobody.
 *
 * <p>Why it is needed: once the request body has been read, Jetty reads nothing more from an HTTP/1
 * connection until the response is written, so a client that leaves during a non-streaming request
 * (or a stream still in prefill) was noticed only when the answer was written, after the engine had
 * generated every token. (Later in a stream a failed write tells; HTTP/2 resets the stream, which
 * Jetty reports through the request's failure listeners.)
 *
 * <p>How, without touching Jetty's reading: the connection's socket channel is registered for
 * readability with a second selector, this class's own, on one daemon thread. A channel may be
 * registered with several selectors; Jetty's keeps its own registration and its own reads. When the
 * socket turns readable the watch only asks how many bytes are buffered ({@code available()}, which
 * consumes nothing): none, twice in a row, means end of stream (a closed socket stays readable, a
 * spurious wake-up does not repeat), so the client is gone. Bytes mean the client pipelined its next
 * request; they stay in the socket for Jetty's parser and the watch simply ends. A watch that fires
 * after its answer was written aborts an exchange that has already ended, which is a no-op; so the
 * watch can never cost a request, and disarming it ({@link #disarm}) is only to stop work early.
 *
 * <p>Only plain HTTP/1.x on a {@link SocketChannelEndPoint} is watched: over TLS the socket's bytes
 * are records, not requests, and a close_notify is data; there the answer's write is still the signal.
 *
 * <p>Threading: {@link #arm} and {@link #disarm} from any thread; the gone listener runs on the watch
 * thread and must not block. One selector per class loader, started on first use.
 */
final class ClientCloseWatch {

    private static final Logger LOG = LoggerFactory.getLogger(ClientCloseWatch.class);
    /** A watch that watches nothing (HTTP/2, TLS, no channel, or the selector failed to open). */
    static final ClientCloseWatch NONE = new ClientCloseWatch(null, null);

    private final SelectionKey key;
    private final Watched watched;

    private ClientCloseWatch(SelectionKey key, Watched watched) {
        this.key = key;
        this.watched = watched;
    }

    /** Stops watching; idempotent. The connection's key stays registered for its next request. */
    void disarm() {
        if (key != null) {
            Loop.disarm(key, watched);
        }
    }

    /** Watches {@code request}'s connection; {@code gone} receives one failure if the client closes it. */
    static ClientCloseWatch arm(Request request, Consumer<Throwable> gone) {
        HttpVersion version = request.getConnectionMetaData().getHttpVersion();
        if (version != HttpVersion.HTTP_1_1 && version != HttpVersion.HTTP_1_0) {
            return NONE;
        }
        Connection connection = request.getConnectionMetaData().getConnection();
        if (connection == null || !(connection.getEndPoint() instanceof SocketChannelEndPoint endPoint)
                || endPoint.getChannel() == null) {
            return NONE;
        }
        Loop loop = Loop.get();
        return loop == null ? NONE : loop.register(endPoint.getChannel(), gone);
    }

    /**
     * The client-gone cause. Quiet: Jetty then answers the abort without a warning per departed client
     * (a client leaving is routine, not a server fault).
     */
    static final class ClientClosed extends EOFException implements org.eclipse.jetty.io.QuietException {
        private static final long serialVersionUID = 1L;

        ClientClosed() {
            super("the client closed the connection");
        }
    }

    /** What the loop keeps per watched channel. */
    private static final class Watched {
        final Consumer<Throwable> gone;
        int emptyReadable; // consecutive readable wake-ups with nothing buffered; loop thread only

        Watched(Consumer<Throwable> gone) {
            this.gone = gone;
        }
    }

    /** The selector and its thread. */
    private static final class Loop implements Runnable {
        private static volatile Loop instance;
        private static boolean failed; // guarded by Loop.class

        private final Selector selector;

        private Loop(Selector selector) {
            this.selector = selector;
        }

        static Loop get() {
            Loop loop = instance;
            if (loop != null) {
                return loop;
            }
            synchronized (Loop.class) {
                if (instance == null && !failed) {
                    try {
                        instance = new Loop(Selector.open());
                        Thread thread = new Thread(instance, "kvroute-client-close-watch");
                        thread.setDaemon(true);
                        thread.start();
                    } catch (IOException e) {
                        failed = true;
                        LOG.warn("cannot open a selector; clients leaving before the first byte are noticed late", e);
                    }
                }
                return instance;
            }
        }

        /**
         * Arms the watch on {@code channel}. A connection keeps one key with this selector for its whole
         * life (re-registering a channel whose key was just cancelled fails until the next select), and
         * each request arms and disarms it by its interest set; closing the channel cancels it.
         */
        ClientCloseWatch register(SocketChannel channel, Consumer<Throwable> gone) {
            Watched watched = new Watched(gone);
            try {
                SelectionKey key = channel.keyFor(selector);
                if (key == null) {
                    key = channel.register(selector, SelectionKey.OP_READ, watched);
                } else {
                    synchronized (key) {
                        key.attach(watched);
                        key.interestOps(SelectionKey.OP_READ);
                    }
                }
                selector.wakeup(); // a select in progress sees a new key or interest only once woken
                return new ClientCloseWatch(key, watched);
            } catch (ClosedChannelException | CancelledKeyException | IllegalArgumentException
                    | java.nio.channels.IllegalBlockingModeException e) {
                return NONE; // the connection is closing: the answer's write will tell
            }
        }

        /** Disarms {@code key} if it still watches for {@code watched}'s request. */
        static void disarm(SelectionKey key, Watched watched) {
            synchronized (key) {
                if (key.attachment() == watched) {
                    key.attach(null);
                    try {
                        key.interestOps(0);
                    } catch (CancelledKeyException closed) {
                        // the connection closed
                    }
                }
            }
        }

        @Override
        public void run() {
            while (true) {
                try {
                    selector.select();
                    Iterator<SelectionKey> ready = selector.selectedKeys().iterator();
                    while (ready.hasNext()) {
                        SelectionKey key = ready.next();
                        ready.remove();
                        check(key);
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.debug("client close watch: select failed", e);
                }
            }
        }

        private static void check(SelectionKey key) {
            Watched watched;
            synchronized (key) {
                watched = (Watched) key.attachment();
            }
            if (watched == null || !key.isValid()) {
                return; // disarmed meanwhile
            }
            SocketChannel channel = (SocketChannel) key.channel();
            int buffered;
            try {
                buffered = channel.socket().getInputStream().available();
            } catch (IOException e) {
                buffered = -1; // reset, or closed under us
            }
            if (buffered > 0) {
                disarm(key, watched); // a pipelined request: Jetty's parser reads it after this answer
                return;
            }
            if (buffered == 0 && ++watched.emptyReadable < 2 && channel.isOpen()) {
                return; // level-triggered: a real end of stream is selected again at once
            }
            disarm(key, watched);
            try {
                watched.gone.accept(new ClientClosed());
            } catch (RuntimeException e) {
                LOG.debug("client close watch: the gone listener failed", e);
            }
        }
    }
}
