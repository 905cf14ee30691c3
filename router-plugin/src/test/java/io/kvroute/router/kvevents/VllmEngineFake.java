package io.kvroute.router.kvevents;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One vLLM dp rank's KV-event sockets as vLLM {@code vllm/distributed/kv_events.py}
 * ({@code ZmqEventPublisher}) runs them: a PUB sending {@code [topic, seq, payload]} with no
 * heartbeat, and a ROUTER answering a start seq with every kept batch at or above it as
 * {@code [id, b"", topic, seq, payload]} and the end {@code [id, b"", b"", END, b""]}; a start
 * below the oldest kept batch silently begins at the oldest. Payloads are given as bytes (the
 * golden vectors), so nothing here encodes events. The ROUTER is served by its own thread.
 */
final class VllmEngineFake implements AutoCloseable {
    private final ZMQ.Socket pub;
    private final byte[] topic;
    private final List<long[]> seqs = new CopyOnWriteArrayList<>();
    private final List<byte[]> kept = new CopyOnWriteArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread replayThread;
    final String pubEndpoint;
    final String replayEndpoint;
    /** Start seqs asked for, in order. */
    final List<Long> replayRequests = new CopyOnWriteArrayList<>();
    private long nextSeq;

    VllmEngineFake(ZContext ctx, String topic) {
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        pub = ctx.createSocket(SocketType.PUB);
        pub.bind("tcp://127.0.0.1:*");
        pubEndpoint = pub.getLastEndpoint();
        ZMQ.Socket router = ctx.createSocket(SocketType.ROUTER);
        router.bind("tcp://127.0.0.1:*");
        router.setReceiveTimeOut(50);
        replayEndpoint = router.getLastEndpoint();
        replayThread = new Thread(() -> serve(router), "vllm-fake-replay");
        replayThread.setDaemon(true);
        replayThread.start();
    }

    /** Keeps a batch in the replay buffer without sending it live (history from before the router came). */
    synchronized long keep(byte[] payload) {
        long seq = nextSeq++;
        seqs.add(new long[] {seq});
        kept.add(payload);
        return seq;
    }

    /** Publishes a batch live (and keeps it for replay). */
    synchronized long publish(byte[] payload) {
        long seq = keep(payload);
        pub.sendMore(topic);
        pub.sendMore(seqFrame(seq));
        pub.send(payload);
        return seq;
    }

    /** Sends a batch live under a given seq without keeping it (a stale or duplicate frame). */
    synchronized void sendRaw(long seq, byte[] payload) {
        pub.sendMore(topic);
        pub.sendMore(seqFrame(seq));
        pub.send(payload);
    }

    /** Forgets the oldest kept batches, as vLLM's bounded deque does past {@code buffer_steps}. */
    void dropOldest(int n) {
        for (int i = 0; i < n; i++) {
            seqs.remove(0);
            kept.remove(0);
        }
    }

    private void serve(ZMQ.Socket router) {
        try {
            while (running.get()) {
                byte[] id = router.recv(0);
                if (id == null) {
                    continue;
                }
                List<byte[]> rest = new ArrayList<>();
                while (router.hasReceiveMore()) {
                    rest.add(router.recv(0));
                }
                if (rest.size() != 2 || rest.get(1).length != 8) {
                    continue; // vLLM logs "Invalid replay request" and answers nothing
                }
                long start = ByteBuffer.wrap(rest.get(1)).getLong();
                replayRequests.add(start);
                for (int i = 0; i < seqs.size(); i++) {
                    long seq = seqs.get(i)[0];
                    if (seq >= start) {
                        router.sendMore(id);
                        router.sendMore(new byte[0]);
                        router.sendMore(topic);
                        router.sendMore(seqFrame(seq));
                        router.send(kept.get(i));
                    }
                }
                router.sendMore(id);
                router.sendMore(new byte[0]);
                router.sendMore(new byte[0]);
                router.sendMore(seqFrame(-1));
                router.send(new byte[0]);
            }
        } catch (RuntimeException e) {
            // context closed
        } finally {
            router.close();
        }
    }

    private static byte[] seqFrame(long seq) {
        return ByteBuffer.allocate(8).putLong(seq).array();
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        replayThread.join(5_000);
        pub.close();
    }
}
