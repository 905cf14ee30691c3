package io.kvroute.scheduler.report;

import io.kvroute.protocol.LoadStat;
import io.kvroute.protocol.LoadStatWire;
import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * Publishes engine load reports on one ZeroMQ PUB socket per attention-DP rank (SGLang
 * {@code load_publisher.py} compatible; wire format in {@code docs/load-report-protocol.md}).
 *
 * <p><b>Threading.</b> A dedicated publisher thread owns the sockets (ZeroMQ sockets stay on the
 * thread that made them); the engine thread never touches ZeroMQ. {@link #onStep} runs the
 * {@link PublishSchedule} on the caller's thread and, when a stat is due, hands it over through a
 * one-slot mailbox per rank and unparks the publisher thread. If the publisher thread falls behind,
 * a newer stat replaces the unsent one (reports are conflated, never queued); {@code seq} is
 * assigned at send time, so conflation shows no gap. {@code onStep} never blocks and allocates
 * only when a stat is due. Calls to {@code onStep} for one rank must be serialized (one engine
 * thread per rank); {@link #endpoints()} and {@link #close()} are thread-safe.
 *
 * <p><b>Endpoints.</b> Rank {@code r} binds: for {@code tcp://host:P} with a fixed port, port
 * {@code P + r}; for port {@code 0} or {@code *}, a free port chosen by the OS; for
 * {@code inproc://name} or {@code ipc://name}, the name itself when {@code dpSize == 1}, else
 * {@code name-r}. {@link #endpoints()} returns what was actually bound (a wildcard host comes back
 * as {@code 0.0.0.0}; the advertiser substitutes the engine's reachable host).
 *
 * <p><b>Socket options.</b> Send HWM 8 (as SGLang sets it): a subscriber that falls behind loses
 * reports, which it sees as {@code seq} gaps. Linger 0: stop promptly, a lost last report is
 * harmless because freshness expires anyway.
 */
public final class LoadPublisher implements AutoCloseable {
    /** How long {@link #bind} waits for the publisher thread to bind its sockets. */
    private static final long BIND_TIMEOUT_SECONDS = 10;
    /** Idle park of the publisher thread; it is unparked on every handoff, so this only bounds close latency. */
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * Publisher options.
     *
     * @param everySteps publish at most once every this many engine steps (SGLang: 5)
     * @param resendInterval an unchanged stat is re-sent at most this often (SGLang: 1 s)
     * @param sndHwm ZeroMQ send high-water mark per socket (SGLang: 8)
     * @param nanoClock monotonic clock in nanoseconds for the resend rule
     * @param context a shared ZeroMQ context (needed for {@code inproc://}), or {@code null} to own one
     */
    public record Options(int everySteps, Duration resendInterval, int sndHwm, LongSupplier nanoClock,
                          ZContext context) {
        public Options {
            requireNonNull(resendInterval, "resendInterval");
            requireNonNull(nanoClock, "nanoClock");
            if (everySteps < 1) {
                throw new IllegalArgumentException("load-publish every-steps must be at least 1, got " + everySteps);
            }
            if (sndHwm < 1) {
                throw new IllegalArgumentException("load-publish send HWM must be at least 1, got " + sndHwm);
            }
        }

        public static Options defaults() {
            return new Options(5, Duration.ofSeconds(1), 8, System::nanoTime, null);
        }

        public Options withEverySteps(int n) {
            return new Options(n, resendInterval, sndHwm, nanoClock, context);
        }

        public Options withResendInterval(Duration d) {
            return new Options(everySteps, d, sndHwm, nanoClock, context);
        }

        public Options withSndHwm(int hwm) {
            return new Options(everySteps, resendInterval, hwm, nanoClock, context);
        }

        public Options withNanoClock(LongSupplier clock) {
            return new Options(everySteps, resendInterval, sndHwm, clock, context);
        }

        public Options withContext(ZContext ctx) {
            return new Options(everySteps, resendInterval, sndHwm, nanoClock, ctx);
        }
    }

    private final int dpSize;
    private final Options options;
    private final PublishSchedule[] schedules;
    private final AtomicReferenceArray<LoadStat> mailbox;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong sendErrors = new AtomicLong();
    private final List<String> endpoints;
    private final Thread thread;
    private volatile boolean running = true;

    private LoadPublisher(List<String> requested, int dpSize, Options options) {
        this.dpSize = dpSize;
        this.options = options;
        this.schedules = new PublishSchedule[dpSize];
        long resendNanos = options.resendInterval().toNanos();
        for (int r = 0; r < dpSize; r++) {
            schedules[r] = new PublishSchedule(options.everySteps(), resendNanos);
        }
        this.mailbox = new AtomicReferenceArray<>(dpSize);
        CompletableFuture<List<String>> bound = new CompletableFuture<>();
        this.thread = new Thread(() -> run(requested, bound), "kvroute-load-publisher");
        thread.setDaemon(true);
        thread.start();
        try {
            this.endpoints = List.copyOf(bound.get(BIND_TIMEOUT_SECONDS, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            running = false;
            throw new IllegalStateException("load publisher did not bind " + requested + " within "
                    + BIND_TIMEOUT_SECONDS + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
            throw new IllegalStateException("interrupted while binding " + requested, e);
        }
    }

    /** Binds one PUB socket per rank with default options (every 5 steps, 1 s resend, HWM 8). */
    public static LoadPublisher bind(String endpoint, int dpSize) {
        return bind(endpoint, dpSize, Options.defaults());
    }

    /**
     * Binds one PUB socket per rank and starts the publisher thread.
     *
     * @throws IllegalArgumentException if the endpoint cannot be parsed or dpSize &lt; 1
     * @throws IllegalStateException if a socket cannot be bound (the message names the endpoint)
     */
    public static LoadPublisher bind(String endpoint, int dpSize, Options options) {
        requireNonNull(endpoint, "endpoint");
        requireNonNull(options, "options");
        return new LoadPublisher(rankEndpoints(endpoint, dpSize), dpSize, options);
    }

    /** The endpoint each rank binds, per the rules in the class comment. */
    static List<String> rankEndpoints(String endpoint, int dpSize) {
        if (dpSize < 1) {
            throw new IllegalArgumentException("dp size must be at least 1, got " + dpSize);
        }
        int sep = endpoint.indexOf("://");
        if (sep <= 0) {
            throw new IllegalArgumentException("load-publish-endpoint must look like tcp://host:port, got '" + endpoint + "'");
        }
        String transport = endpoint.substring(0, sep);
        List<String> out = new ArrayList<>(dpSize);
        if (transport.equals("tcp")) {
            int colon = endpoint.lastIndexOf(':');
            if (colon <= sep) {
                throw new IllegalArgumentException("load-publish-endpoint has no port: '" + endpoint + "'");
            }
            String hostPart = endpoint.substring(0, colon);
            String port = endpoint.substring(colon + 1);
            if (port.equals("*") || port.equals("0")) {
                for (int r = 0; r < dpSize; r++) {
                    out.add(hostPart + ":*");
                }
            } else {
                int base;
                try {
                    base = Integer.parseInt(port);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("load-publish-endpoint port is not a number: '" + endpoint + "'");
                }
                if (base < 1 || base + dpSize - 1 > 65535) {
                    throw new IllegalArgumentException("load-publish-endpoint port out of range for dp size "
                            + dpSize + ": '" + endpoint + "'");
                }
                for (int r = 0; r < dpSize; r++) {
                    out.add(hostPart + ":" + (base + r));
                }
            }
        } else {
            for (int r = 0; r < dpSize; r++) {
                out.add(dpSize == 1 ? endpoint : endpoint + "-" + r);
            }
        }
        return out;
    }

    /**
     * Called by the engine thread after each step with the rank's current stat. Never blocks.
     *
     * @throws IllegalArgumentException if the stat's rank is outside {@code [0, dpSize)}
     */
    public void onStep(LoadStat stat) {
        int rank = stat.attnDpRank();
        if (rank >= dpSize) {
            throw new IllegalArgumentException("attn_dp_rank " + rank + " outside dp size " + dpSize);
        }
        if (schedules[rank].onStep(stat, options.nanoClock().getAsLong())) {
            mailbox.set(rank, stat);
            LockSupport.unpark(thread);
        }
    }

    /** The bound endpoints, index = rank. */
    public List<String> endpoints() {
        return endpoints;
    }

    /** Reports handed to ZeroMQ so far (all ranks); a subscriber's loss is this minus what it received. */
    public long sentCount() {
        return sent.get();
    }

    /** Sends that ZeroMQ rejected with an exception (each is one lost report). */
    public long sendErrorCount() {
        return sendErrors.get();
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(BIND_TIMEOUT_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run(List<String> requested, CompletableFuture<List<String>> bound) {
        ZContext ctx = options.context() != null ? options.context() : new ZContext(1);
        boolean ownContext = options.context() == null;
        ZMQ.Socket[] sockets = new ZMQ.Socket[dpSize];
        long[] seq = new long[dpSize];
        try {
            List<String> actual = new ArrayList<>(dpSize);
            for (int r = 0; r < dpSize; r++) {
                ZMQ.Socket s = ctx.createSocket(SocketType.PUB);
                s.setSndHWM(options.sndHwm());
                s.setLinger(0);
                sockets[r] = s;
                try {
                    s.bind(requested.get(r));
                } catch (ZMQException e) {
                    throw new IllegalStateException("cannot bind load-publish-endpoint " + requested.get(r)
                            + " for rank " + r + ": " + e.getMessage(), e);
                }
                actual.add(s.getLastEndpoint());
            }
            bound.complete(actual);
            while (running) {
                for (int r = 0; r < dpSize; r++) {
                    LoadStat stat = mailbox.getAndSet(r, null);
                    if (stat != null) {
                        ZMQ.Socket s = sockets[r];
                        // Counted before sending so a subscriber never sees a report the count lacks.
                        sent.incrementAndGet();
                        try {
                            // PUB never blocks: at the HWM ZeroMQ drops the message for that subscriber.
                            s.sendMore(LoadStatWire.TOPIC);
                            s.sendMore(LoadStatWire.seqFrame(seq[r]++));
                            s.send(LoadStatWire.payload(stat), 0);
                        } catch (RuntimeException e) {
                            if (!running) {
                                break;
                            }
                            sendErrors.incrementAndGet(); // one lost report; keep publishing
                        }
                    }
                }
                LockSupport.parkNanos(IDLE_PARK_NANOS);
            }
        } catch (RuntimeException e) {
            bound.completeExceptionally(e);
        } finally {
            for (ZMQ.Socket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
            if (ownContext) {
                ctx.close();
            }
        }
    }
}
