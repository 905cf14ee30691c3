package io.kvroute.scheduler.report;

import static java.util.Objects.requireNonNull;

import io.kvroute.protocol.KvEventWire;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Publishes an engine's KV-cache events in SGLang's format ({@link KvEventFormat#SGLANG}, the
 * default) or vLLM's ({@link KvEventFormat#VLLM}: map events, the topic frame in replay answers, no
 * heartbeat; the same port layout, PUB base + rank and replay base + rank): per dp rank one PUB
 * socket sending {@code [topic, seq 8-byte BE, msgpack [ts, [events...], rank]]} and one ROUTER
 * replay socket answering {@code [b"", start_seq 8-byte BE]} with every kept batch whose seq is at
 * least {@code start_seq} as {@code [b"", seq, payload]}, then {@code [b"", -1, b""]}. The last
 * {@code replayBufferBatches} batches per rank are kept (vLLM keeps 10,000); a start below them is
 * answered from the oldest kept batch, which tells the subscriber it missed history.
 *
 * <p><b>Threading.</b> The engine thread calls {@link #blockStored}, {@link #blockRemoved} and
 * {@link #allBlocksCleared}, which only enqueue (never block, never touch ZeroMQ). One publisher
 * thread owns every socket: it sends the queued events of a rank as one batch (so a burst of
 * stores costs one message), serves replay requests, and sends an empty batch after
 * {@code heartbeatNanos} of quiet so a subscriber can tell a silent publisher from an idle engine.
 * Events of one rank keep their order. Thread-safe.
 */
public final class KvEventPublisher implements AutoCloseable {
    private static final long BIND_TIMEOUT_SECONDS = 10;

    /** Publisher options: replay buffer size, heartbeat period, a shared context for {@code inproc://}. */
    public record Options(int replayBufferBatches, long heartbeatNanos, ZContext context, KvEventFormat format) {
        public static Options defaults() {
            return new Options(10_000, TimeUnit.SECONDS.toNanos(1), null, KvEventFormat.SGLANG);
        }

        public Options withContext(ZContext ctx) {
            return new Options(replayBufferBatches, heartbeatNanos, ctx, format);
        }

        public Options withReplayBufferBatches(int n) {
            return new Options(n, heartbeatNanos, context, format);
        }

        public Options withHeartbeatNanos(long n) {
            return new Options(replayBufferBatches, n, context, format);
        }

        /** The wire shape; {@link KvEventFormat#VLLM} also turns the heartbeat off, as vLLM sends none. */
        public Options withFormat(KvEventFormat f) {
            return new Options(replayBufferBatches, heartbeatNanos, context, requireNonNull(f, "format"));
        }
    }

    private record Kept(long seq, byte[] payload) {}

    private final Options options;
    private final byte[] topic;
    private final int dpSize;
    private final List<Queue<KvEventWire.Event>> queues = new ArrayList<>();
    private final AtomicLong sent = new AtomicLong();
    private final Thread thread;
    private final CompletableFuture<List<List<String>>> bound = new CompletableFuture<>();
    private volatile boolean running = true;
    private volatile List<String> endpoints = List.of();
    private volatile List<String> replayEndpoints = List.of();

    private KvEventPublisher(List<String> pubEndpoints, List<String> routerEndpoints, String topic, Options options) {
        this.options = options;
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.dpSize = pubEndpoints.size();
        for (int r = 0; r < dpSize; r++) {
            queues.add(new ConcurrentLinkedQueue<>());
        }
        this.thread = new Thread(() -> run(pubEndpoints, routerEndpoints), "kvroute-kv-event-publisher");
        thread.setDaemon(true);
        thread.start();
        try {
            List<List<String>> b = bound.get(BIND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            endpoints = b.get(0);
            replayEndpoints = b.get(1);
        } catch (ExecutionException e) {
            close();
            throw new IllegalStateException("cannot bind KV-event sockets: " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException | InterruptedException e) {
            close();
            throw new IllegalStateException("KV-event publisher did not bind within " + BIND_TIMEOUT_SECONDS + " s", e);
        }
    }

    /**
     * Binds one PUB and one replay ROUTER per rank (endpoint rules of {@link LoadPublisher}: a fixed
     * port P gives rank r port P + r, {@code *} a free port) and starts the publisher thread.
     */
    public static KvEventPublisher bind(String endpoint, String replayEndpoint, int dpSize, String topic, Options options) {
        requireNonNull(topic, "topic");
        return new KvEventPublisher(LoadPublisher.rankEndpoints(endpoint, dpSize),
                LoadPublisher.rankEndpoints(replayEndpoint, dpSize), topic, requireNonNull(options, "options"));
    }

    /** The bound event endpoints, one per rank. */
    public List<String> endpoints() {
        return endpoints;
    }

    /** The bound replay endpoints, one per rank. */
    public List<String> replayEndpoints() {
        return replayEndpoints;
    }

    /** Batches sent so far (all ranks, heartbeats included). */
    public long sentCount() {
        return sent.get();
    }

    /** Pages entered rank {@code rank}'s cache as one chain; {@code tokenIds} are the pages' tokens. */
    public void blockStored(int rank, long[] hashes, Long parentHash, int[] tokenIds, int blockSize) {
        blockStored(rank, hashes, parentHash, tokenIds, blockSize, null, null);
    }

    /**
     * Pages a LoRA request stored: {@code tokenIds} are its real token ids, {@code loraId} the engine's adapter
     * number and {@code loraName} its name (vLLM {@code vllm/v1/core/block_pool.py} {@code cache_full_blocks}:
     * {@code lora_id=request.lora_request.adapter_id}, {@code lora_name=request.lora_request.name}, and the name as
     * every block's extra key). Both null for the base model. Only vLLM's encoding carries the name; SGLang's
     * events carry no adapter (its {@code lora_id} is always None).
     */
    public void blockStored(int rank, long[] hashes, Long parentHash, int[] tokenIds, int blockSize, Integer loraId,
            String loraName) {
        queue(rank).add(KvEventWire.stored(hashes.clone(), parentHash, tokenIds.clone(), blockSize, loraId, loraName));
    }

    /** Pages left rank {@code rank}'s cache. */
    public void blockRemoved(int rank, long[] hashes) {
        queue(rank).add(KvEventWire.removed(hashes.clone()));
    }

    /** Rank {@code rank}'s cache was flushed. */
    public void allBlocksCleared(int rank) {
        queue(rank).add(KvEventWire.cleared());
    }

    private Queue<KvEventWire.Event> queue(int rank) {
        if (rank < 0 || rank >= dpSize) {
            throw new IllegalArgumentException("rank " + rank + " outside [0, " + dpSize + ")");
        }
        return queues.get(rank);
    }

    @Override
    public void close() {
        running = false;
        if (thread.isAlive() && Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run(List<String> pubEndpoints, List<String> routerEndpoints) {
        ZContext ctx = options.context() != null ? options.context() : new ZContext(1);
        ZMQ.Socket[] pubs = new ZMQ.Socket[dpSize];
        ZMQ.Socket[] routers = new ZMQ.Socket[dpSize];
        ZMQ.Poller poller = null;
        try {
            List<String> boundPub = new ArrayList<>();
            List<String> boundRouter = new ArrayList<>();
            try {
                for (int r = 0; r < dpSize; r++) {
                    pubs[r] = ctx.createSocket(SocketType.PUB);
                    pubs[r].setLinger(0);
                    pubs[r].setSndHWM(0); // events must not be dropped here: a drop is a gap at the subscriber
                    pubs[r].bind(pubEndpoints.get(r));
                    boundPub.add(pubs[r].getLastEndpoint());
                    routers[r] = ctx.createSocket(SocketType.ROUTER);
                    routers[r].setLinger(0);
                    routers[r].bind(routerEndpoints.get(r));
                    boundRouter.add(routers[r].getLastEndpoint());
                }
            } catch (RuntimeException e) {
                bound.completeExceptionally(e);
                return;
            }
            bound.complete(List.of(List.copyOf(boundPub), List.copyOf(boundRouter)));
            poller = ctx.createPoller(dpSize);
            for (ZMQ.Socket router : routers) {
                poller.register(router, ZMQ.Poller.POLLIN);
            }
            long[] seq = new long[dpSize];
            long[] lastSentNanos = new long[dpSize];
            Arrays.fill(lastSentNanos, System.nanoTime());
            List<ArrayDeque<Kept>> kept = new ArrayList<>();
            for (int r = 0; r < dpSize; r++) {
                kept.add(new ArrayDeque<>());
            }
            List<KvEventWire.Event> batch = new ArrayList<>();
            boolean vllm = options.format() == KvEventFormat.VLLM;
            while (running) {
                long now = System.nanoTime();
                for (int r = 0; r < dpSize; r++) {
                    batch.clear();
                    KvEventWire.Event e;
                    while ((e = queues.get(r).poll()) != null) {
                        batch.add(e);
                    }
                    if (batch.isEmpty() && (vllm || now - lastSentNanos[r] < options.heartbeatNanos())) {
                        continue;
                    }
                    double ts = System.currentTimeMillis() / 1000.0;
                    byte[] payload = vllm ? KvEventWire.vllmBatch(ts, batch, r) : KvEventWire.sglangBatch(ts, batch, r);
                    long s = seq[r]++;
                    pubs[r].sendMore(topic);
                    pubs[r].sendMore(KvEventWire.seqFrame(s));
                    pubs[r].send(payload);
                    lastSentNanos[r] = now;
                    sent.incrementAndGet();
                    ArrayDeque<Kept> ring = kept.get(r);
                    ring.addLast(new Kept(s, payload));
                    if (ring.size() > options.replayBufferBatches()) {
                        ring.removeFirst();
                    }
                }
                if (poller.poll(1) > 0) {
                    for (int r = 0; r < dpSize; r++) {
                        if (poller.pollin(r)) {
                            serveReplay(routers[r], kept.get(r), vllm ? topic : null);
                        }
                    }
                }
            }
        } finally {
            if (poller != null) {
                poller.close();
            }
            for (int r = 0; r < dpSize; r++) {
                if (pubs[r] != null) {
                    pubs[r].close();
                }
                if (routers[r] != null) {
                    routers[r].close();
                }
            }
            if (options.context() == null) {
                ctx.close();
            }
        }
    }

    /**
     * Answers each waiting request {@code [identity, b"", start_seq]}; malformed requests get only the
     * end marker. With a {@code topic} (vLLM's shape) every answer and the end carry a topic frame
     * after the delimiter, the end's empty.
     */
    private static void serveReplay(ZMQ.Socket router, ArrayDeque<Kept> ring, byte[] topic) {
        byte[] identity;
        while ((identity = router.recv(ZMQ.DONTWAIT)) != null) {
            List<byte[]> rest = new ArrayList<>();
            while (router.hasReceiveMore()) {
                rest.add(router.recv(0));
            }
            byte[] start = rest.isEmpty() ? null : rest.get(rest.size() - 1);
            if (start != null && start.length == Long.BYTES) {
                long from = ByteBuffer.wrap(start).getLong();
                for (Kept k : ring) {
                    if (k.seq() >= from) {
                        send(router, identity, KvEventWire.replayAnswer(topic, k.seq(), k.payload()));
                    }
                }
            }
            send(router, identity, KvEventWire.replayEnd(topic != null));
        }
    }

    private static void send(ZMQ.Socket router, byte[] identity, List<byte[]> frames) {
        router.sendMore(identity);
        for (int i = 0; i < frames.size() - 1; i++) {
            router.sendMore(frames.get(i));
        }
        router.send(frames.get(frames.size() - 1));
    }
}
