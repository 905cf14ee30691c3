package io.kvroute.router.zmq;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One thread that owns a set of ZeroMQ sockets (SUB for published streams, DEALER for request/answer
 * side channels), the poller over them, and their lifecycle. ZeroMQ sockets are single-threaded, so
 * every socket is created, read, replaced and closed on this thread; other threads hand work over with
 * {@link #execute}. Both subscriber planes (load reports, KV events) run on it; what a message means is
 * the {@link Handler}'s business.
 *
 * <p>Each iteration: run the queued tasks, call {@link Handler#onIteration} with the injected clock's
 * time (membership, timers, socket replacement), rebuild the poller if the socket set changed, poll,
 * read up to {@code maxDrainPerSocket} messages from each ready socket (so one chatty publisher cannot
 * starve the others), then {@link Handler#afterMessages} and an optional batch window (so messages from
 * many publishers share one wakeup). An exception in an iteration goes to {@link Handler#onLoopError}
 * and the loop goes on. ZeroMQ reconnects a failed connection by itself. A connecting JeroMQ 0.6.0
 * socket stalls in the ZMTP handshake in about 3-4 % of loopback connects (TCP established, the peer's
 * greeting never processed; the binding side completes, so only the connecting side's timer can end it),
 * until the handshake interval fails the connection and ZeroMQ reconnects; messages queued on the
 * socket meanwhile survive the reconnect. JeroMQ's default interval is 30 s, which left a new
 * subscription deaf for 30 s; every socket here sets {@link #HANDSHAKE_TIMEOUT_MILLIS} instead (the
 * same 30 s stall is open upstream as jeromq issue 912). {@link Subscription#reopen}, which the
 * handler calls for a socket silent too long, stays as the last resort.
 *
 * <p>Shutdown order: {@link #close} clears the running flag and waits for the thread, never interrupting
 * it (an interrupt inside a JeroMQ selector closes its channels under the IO thread, which then reports
 * {@code ClosedChannelException}). The thread leaves its poll within one poll timeout, closes the poller
 * and every socket with linger 0 itself, and only then closes the context it owns. A context the loop
 * owns sends JeroMQ's IO-thread errors to this class's debug log instead of standard error.
 *
 * <p>Threading: {@link #execute}, {@link #start} and {@link #close} are thread-safe; everything else,
 * {@link Subscription} included, is for the loop thread only (the handler's callbacks).
 */
public final class SubscriberLoop implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SubscriberLoop.class);
    /**
     * ZMTP handshake limit of every socket: a loopback handshake takes well under a millisecond and a
     * cross-region one a few round trips, so 2 s fails only a stalled one (JeroMQ's default is 30 s).
     */
    static final int HANDSHAKE_TIMEOUT_MILLIS = 2_000;
    /** How long {@link #close} waits for the thread: many poll timeouts. */
    private static final long CLOSE_WAIT_MILLIS = 10_000;

    /** The plane's side of the loop; every method is called on the loop thread. */
    public interface Handler {

        /** Start of every iteration, after the queued tasks ran: membership, timers, socket replacement. */
        void onIteration(long nowNanos);

        /**
         * One multipart message read from {@code from}: {@code frames[0 .. min(count, frames.length))} are
         * valid during the call only; {@code count} also counts frames beyond the array, which are dropped.
         */
        void onMessage(Subscription from, byte[][] frames, int count);

        /** After a wakeup's messages were read. */
        void afterMessages();

        /** How long the next poll may wait. */
        long pollTimeoutMillis();

        /** An iteration threw; the loop goes on. */
        void onLoopError(RuntimeException e);

        /** The loop stopped: every socket is closed. */
        void onStopped();
    }

    /**
     * @param threadName the loop thread's name
     * @param maxFrames frames kept per message
     * @param maxDrainPerSocket messages read from one socket per wakeup
     * @param batchWindowNanos pause after a wakeup that read messages, 0 for none
     */
    public record Settings(String threadName, int maxFrames, int maxDrainPerSocket, long batchWindowNanos) {
        public Settings {
            requireNonNull(threadName, "threadName");
            if (maxFrames < 1 || maxDrainPerSocket < 1 || batchWindowNanos < 0) {
                throw new IllegalArgumentException("bad subscriber loop settings: " + maxFrames + " frames, "
                        + maxDrainPerSocket + " per socket, " + batchWindowNanos + " ns batch window");
            }
        }
    }

    private final Settings settings;
    private final LongSupplier nanoClock;
    private final ZContext sharedContext;
    private final Thread thread;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private volatile Handler handler;
    private volatile boolean running = true;

    // loop thread only
    private ZContext ctx;
    private final List<Subscription> open = new ArrayList<>();
    private Subscription[] polled = new Subscription[0];
    private boolean socketsChanged;
    private final byte[][] frames;

    /**
     * @param nanoClock the router's injected clock, handed to {@link Handler#onIteration}
     * @param sharedContext a context shared with in-process publishers ({@code inproc://}), or null for the
     *     loop to own one (its owner closes a shared context after {@link #close} returned)
     */
    public SubscriberLoop(Settings settings, LongSupplier nanoClock, ZContext sharedContext) {
        this.settings = requireNonNull(settings, "settings");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
        this.sharedContext = sharedContext;
        this.frames = new byte[settings.maxFrames()][];
        this.thread = new Thread(this::run, settings.threadName());
        thread.setDaemon(true);
    }

    /** Starts the thread with {@code handler}; tasks queued before run first. */
    public void start(Handler handler) {
        this.handler = requireNonNull(handler, "handler");
        thread.start();
    }

    /** Runs {@code task} on the loop thread at the start of its next iteration (any thread). */
    public void execute(Runnable task) {
        tasks.add(requireNonNull(task, "task"));
    }

    /** A SUB socket connected to {@code endpoint}, subscribed to {@code topic} (loop thread only). */
    public Subscription subscribe(String endpoint, String topic, int rcvHwm, Object owner) {
        return add(new Subscription(SocketType.SUB, endpoint, topic.getBytes(StandardCharsets.UTF_8), rcvHwm, owner));
    }

    /** A DEALER socket connected to {@code endpoint} (loop thread only). */
    public Subscription dealer(String endpoint, int rcvHwm, Object owner) {
        return add(new Subscription(SocketType.DEALER, endpoint, null, rcvHwm, owner));
    }

    /** True while the thread runs (a test looks). */
    boolean isAlive() {
        return thread.isAlive();
    }

    @Override
    public void close() {
        running = false;
        if (thread.isAlive() && Thread.currentThread() != thread) {
            try {
                thread.join(CLOSE_WAIT_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.warn("{} did not stop within {} ms", settings.threadName(), CLOSE_WAIT_MILLIS);
            }
        }
    }

    private Subscription add(Subscription s) {
        s.open();
        open.add(s);
        socketsChanged = true;
        return s;
    }

    private void run() {
        ctx = sharedContext != null ? sharedContext : ownContext();
        ZMQ.Poller poller = null;
        try {
            while (running) {
                try {
                    Runnable task;
                    while ((task = tasks.poll()) != null) {
                        task.run();
                    }
                    handler.onIteration(nanoClock.getAsLong());
                    if (socketsChanged) {
                        if (poller != null) {
                            poller.close();
                        }
                        poller = register();
                        socketsChanged = false;
                    }
                    long pollMillis = handler.pollTimeoutMillis();
                    if (polled.length == 0) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pollMillis));
                    } else if (poller.poll(pollMillis) > 0) {
                        for (int i = 0; i < polled.length; i++) {
                            if (poller.pollin(i)) {
                                drain(polled[i]);
                            }
                        }
                        handler.afterMessages();
                        if (settings.batchWindowNanos() > 0) {
                            LockSupport.parkNanos(settings.batchWindowNanos());
                        }
                    }
                } catch (RuntimeException e) {
                    if (!running) {
                        break;
                    }
                    handler.onLoopError(e);
                }
            }
        } finally {
            if (poller != null) {
                poller.close();
            }
            for (Subscription s : open) {
                s.closeSocket();
            }
            open.clear();
            try {
                handler.onStopped();
            } finally {
                if (sharedContext == null) {
                    ctx.close(); // every socket is closed: terminating the context waits for nothing
                }
            }
        }
    }

    private static ZContext ownContext() {
        ZContext own = new ZContext(1);
        own.setLinger(0);
        Thread.UncaughtExceptionHandler quiet = (t, e) -> LOG.debug("ZeroMQ IO thread {}: {}", t.getName(), e.toString());
        own.setUncaughtExceptionHandler(quiet);
        own.setNotificationExceptionHandler(quiet);
        return own;
    }

    private ZMQ.Poller register() {
        ZMQ.Poller poller = ctx.createPoller(Math.max(1, open.size()));
        for (Subscription s : open) {
            poller.register(s.socket, ZMQ.Poller.POLLIN);
        }
        polled = open.toArray(new Subscription[0]);
        return poller;
    }

    private void drain(Subscription s) {
        for (int n = 0; n < settings.maxDrainPerSocket() && s.socket != null; n++) {
            byte[] first = s.socket.recv(ZMQ.DONTWAIT);
            if (first == null) {
                return;
            }
            frames[0] = first;
            int count = 1;
            while (s.socket.hasReceiveMore()) {
                byte[] frame = s.socket.recv(0);
                if (count < frames.length) {
                    frames[count] = frame;
                }
                count++;
            }
            try {
                handler.onMessage(s, frames, count);
            } finally {
                Arrays.fill(frames, null);
            }
        }
    }

    /** One socket of the loop and what it was opened with; loop thread only. */
    public final class Subscription {
        private final SocketType type;
        private final String endpoint;
        private final byte[] topic;
        private final int rcvHwm;
        private final Object owner;
        private ZMQ.Socket socket;

        private Subscription(SocketType type, String endpoint, byte[] topic, int rcvHwm, Object owner) {
            this.type = type;
            this.endpoint = requireNonNull(endpoint, "endpoint");
            this.topic = topic;
            this.rcvHwm = rcvHwm;
            this.owner = owner;
        }

        /** What the plane attached to this socket. */
        public Object owner() {
            return owner;
        }

        public String endpoint() {
            return endpoint;
        }

        /** Replaces the socket by a new one on the same endpoint (a stalled handshake never recovers otherwise). */
        public void reopen() {
            if (socket != null) {
                socket.close();
                open();
                socketsChanged = true;
            }
        }

        /** Closes the socket for good. */
        public void close() {
            if (socket != null) {
                closeSocket();
                open.remove(this);
                socketsChanged = true;
            }
        }

        /** Sends one multipart message; false when the socket is closed or ZeroMQ refused it. */
        public boolean send(byte[]... parts) {
            if (socket == null) {
                return false;
            }
            boolean sent = true;
            for (int i = 0; i < parts.length; i++) {
                sent &= i < parts.length - 1 ? socket.sendMore(parts[i]) : socket.send(parts[i]);
            }
            return sent;
        }

        private void open() {
            ZMQ.Socket s = ctx.createSocket(type);
            s.setLinger(0);
            s.setRcvHWM(rcvHwm);
            s.setHandshakeIvl(HANDSHAKE_TIMEOUT_MILLIS);
            if (topic != null) {
                s.subscribe(topic);
            }
            s.connect(endpoint);
            socket = s;
        }

        private void closeSocket() {
            if (socket != null) {
                socket.close();
                socket = null;
            }
        }
    }
}
