package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.scheduler.report.KvEventPublisher;
import io.kvroute.protocol.PageHash;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The events plane over real JeroMQ sockets on loopback TCP: against the scheduler's
 * {@link KvEventPublisher} (SGLang format, replay ROUTER), and against a hand-driven PUB + ROUTER
 * pair that plays a misbehaving engine (gaps, partial and endless replays, restarts, silence).
 */
class KvEventsPlaneTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int BS = 4;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ZContext ctx = new ZContext(1);
    private KvEventsPlane plane;

    @AfterEach
    void tearDown() {
        if (plane != null) {
            plane.close();
        }
        ctx.close();
    }

    private void startPlane(KvEventsConfig cfg) {
        startPlane(cfg, System::nanoTime);
    }

    private void startPlane(KvEventsConfig cfg, LongSupplier nanoClock) {
        plane = new KvEventsPlane(cfg, nanoClock, registry, null);
        plane.start();
    }

    private int matched(long[] hashes, String worker) {
        KvEventsSnapshot.WorkerEvents w = plane.snapshot().get(worker);
        if (w == null) {
            return -1;
        }
        return plane.index().match(new BlockIndex.Key("m", -1, BS), hashes, plane.slotCount())[w.slots()[0]];
    }

    private double counter(String name, String tag, String value) {
        var c = registry.find(name);
        return tag == null ? c.counter().count() : c.tag(tag, value).counter().count();
    }

    /** A late subscriber replays from seq 0 and then follows live events; hashes equal the router's own. */
    @Test
    void schedulerPublisher_lateJoinIsReplayed_thenStoresAndEvictionsFollowLive() throws Exception {
        int[] tokens = {5, 6, 7, 8, 9, 10, 11, 12, 70000, 1, 2, 3};
        long[] hashes = new PageHash(BS).hashes(tokens, tokens.length);
        try (KvEventPublisher pub = KvEventPublisher.bind("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", 1, "kv",
                KvEventPublisher.Options.defaults().withHeartbeatNanos(50_000_000))) {
            PageHash ph = new PageHash(BS);
            byte[] d0 = ph.digest(null, tokens, 0);
            byte[] d1 = ph.digest(d0, tokens, BS);
            pub.blockStored(0, new long[] {PageHash.wireHash(d0), PageHash.wireHash(d1)}, null,
                    java.util.Arrays.copyOf(tokens, 2 * BS), BS);
            await().atMost(WAIT).until(() -> pub.sentCount() >= 3); // seq 0 and heartbeats went out before we subscribe
            startPlane(KvEventsConfig.defaults());
            plane.addWorker("w", "m", pub.endpoints(), pub.replayEndpoints(), "kv", BS);
            await().atMost(WAIT).until(() -> plane.snapshot().get("w") != null && plane.snapshot().get("w").live());
            assertThat(matched(hashes, "w")).isEqualTo(2);
            assertThat(counter("kvroute.kv.events.replays", "outcome", "completed")).isGreaterThanOrEqualTo(1);

            byte[] d2 = ph.digest(d1, tokens, 2 * BS);
            pub.blockStored(0, new long[] {PageHash.wireHash(d2)}, PageHash.wireHash(d1),
                    java.util.Arrays.copyOfRange(tokens, 2 * BS, 3 * BS), BS);
            await().atMost(WAIT).until(() -> matched(hashes, "w") == 3);
            pub.blockRemoved(0, new long[] {PageHash.wireHash(d2), PageHash.wireHash(d1)});
            await().atMost(WAIT).until(() -> matched(hashes, "w") == 1);
            pub.allBlocksCleared(0);
            await().atMost(WAIT).until(() -> matched(hashes, "w") == 0);
            pub.blockStored(0, new long[] {PageHash.wireHash(d0)}, null, java.util.Arrays.copyOf(tokens, BS), BS);
            await().atMost(WAIT).until(() -> matched(hashes, "w") == 1);
            plane.removeWorker("w");
            await().atMost(WAIT).until(() -> plane.snapshot().get("w") == null);
            assertThat(plane.index().match(new BlockIndex.Key("m", -1, BS), hashes, 4)).containsOnly(0);
        }
    }

    /** A hand-driven engine: one PUB, one ROUTER. */
    private final class FakeEngine implements AutoCloseable {
        final ZMQ.Socket pub = ctx.createSocket(SocketType.PUB);
        final ZMQ.Socket router = ctx.createSocket(SocketType.ROUTER);
        final String pubEndpoint;
        final String routerEndpoint;

        FakeEngine() {
            pub.bind("tcp://127.0.0.1:*");
            router.bind("tcp://127.0.0.1:*");
            router.setReceiveTimeOut(20_000);
            pubEndpoint = pub.getLastEndpoint();
            routerEndpoint = router.getLastEndpoint();
        }

        void send(long seq, long... storedHashes) throws Exception {
            pub.sendMore("kv");
            pub.sendMore(seqFrame(seq));
            pub.send(batch(storedHashes));
        }

        /** Waits for one replay request; returns [identity, start]. */
        Object[] awaitRequest() {
            byte[] identity = router.recv(0);
            if (identity == null) {
                throw new AssertionError("no replay request; states " + plane.snapshot().get("w").states()
                        + " requests " + counter("kvroute.kv.events.replay.requests", null, null)
                        + " loop errors " + counter("kvroute.kv.events.loop.errors", null, null));
            }
            byte[] last = null;
            while (router.hasReceiveMore()) {
                last = router.recv(0);
            }
            return new Object[] {identity, ByteBuffer.wrap(last).getLong()};
        }

        void answer(byte[] identity, long seq, byte[] payload) {
            router.sendMore(identity);
            router.sendMore(new byte[0]);
            router.sendMore(seqFrame(seq));
            router.send(payload);
        }

        /** The SGLang-shaped end marker {@code [b"", END]} (after the identity and delimiter). */
        void end(byte[] identity) {
            router.sendMore(identity);
            router.sendMore(new byte[0]);
            router.sendMore(seqFrame(-1));
            router.send(new byte[0]);
        }

        @Override
        public void close() {
            pub.close();
            router.close();
        }
    }

    private static byte[] seqFrame(long seq) {
        return ByteBuffer.allocate(8).putLong(seq).array();
    }

    static byte[] batch(long... storedHashes) throws Exception {
        return Msgpack.pack(p -> {
            p.packArrayHeader(3).packDouble(0).packArrayHeader(storedHashes.length == 0 ? 0 : 1);
            if (storedHashes.length > 0) {
                p.packArrayHeader(7).packString("BlockStored").packArrayHeader(storedHashes.length);
                for (long h : storedHashes) {
                    p.packLong(h);
                }
                p.packNil().packArrayHeader(0).packInt(BS).packNil().packString("GPU");
            }
            p.packInt(0);
        });
    }

    /**
     * Subscribes, answers the catch-up replay with an empty history and sends seq 0 (retrying through
     * the slow joiner) until it is applied.
     */
    private void goLive(FakeEngine e, long hash) throws Exception {
        plane.addWorker("w", "m", List.of(e.pubEndpoint), List.of(e.routerEndpoint), "kv", BS);
        Object[] catchUp = e.awaitRequest();
        assertThat(catchUp[1]).isEqualTo(0L);
        e.end((byte[]) catchUp[0]);
        await().atMost(WAIT).pollInSameThread().pollInterval(Duration.ofMillis(50)).until(() -> {
            if (plane.snapshot().get("w") != null && plane.snapshot().get("w").live() && matched(new long[] {hash}, "w") == 1) {
                return true;
            }
            e.send(0, hash);
            return false;
        });
    }

    @Test
    void gap_isReplayedOverDealer_fromTheFirstMissingSeq() throws Exception {
        startPlane(KvEventsConfig.defaults());
        try (FakeEngine e = new FakeEngine()) {
            goLive(e, 11);
            e.send(2, 33); // seq 1 (hash 22) lost
            Object[] req = e.awaitRequest();
            assertThat(req[1]).isEqualTo(1L);
            e.answer((byte[]) req[0], 1, batch(22));
            e.answer((byte[]) req[0], 2, batch(33));
            e.end((byte[]) req[0]);
            await().atMost(WAIT).until(() -> matched(new long[] {11, 22, 33}, "w") == 3);
            assertThat(plane.snapshot().get("w").live()).isTrue();
        }
    }

    @Test
    void incompleteReplay_dropsTheWorkerToUnknownAndClearsItsBlocks() throws Exception {
        startPlane(KvEventsConfig.defaults());
        try (FakeEngine e = new FakeEngine()) {
            goLive(e, 11);
            e.send(5, 33);
            Object[] req = e.awaitRequest();
            e.answer((byte[]) req[0], 4, batch(22)); // 1..3 are no longer kept
            e.end((byte[]) req[0]);
            await().atMost(WAIT).until(() -> plane.snapshot().get("w").states().equals(List.of("unknown")));
            assertThat(matched(new long[] {11}, "w")).isZero();
            assertThat(counter("kvroute.kv.events.replays", "outcome", "failed")).isEqualTo(1);
        }
    }

    @Test
    void endlessReplay_isCutOff() throws Exception {
        startPlane(KvEventsConfig.defaults().withMaxReplayBatches(50));
        try (FakeEngine e = new FakeEngine()) {
            goLive(e, 11);
            e.send(3, 44);
            Object[] req = e.awaitRequest();
            for (long s = 1; s <= 200; s++) {
                e.answer((byte[]) req[0], s, batch(100 + s)); // never sends the end marker
            }
            await().atMost(WAIT).until(() -> plane.snapshot().get("w").states().equals(List.of("unknown")));
        }
    }

    /** On a clock the test moves: nothing times out before the deadline, exactly one replay after it. */
    @Test
    void silentReplay_timesOut() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        AtomicLong nowNanos = new AtomicLong();
        startPlane(KvEventsConfig.defaults().withReplayTimeout(timeout), nowNanos::get);
        try (FakeEngine e = new FakeEngine()) {
            goLive(e, 11);
            e.send(3, 44);
            e.awaitRequest(); // and never answer
            nowNanos.addAndGet(timeout.toNanos());
            // several housekeeping passes at the deadline itself: still replaying throughout
            await().during(Duration.ofMillis(50)).atMost(WAIT)
                    .until(() -> plane.snapshot().get("w").states().equals(List.of("replaying")));
            nowNanos.addAndGet(1);
            await().atMost(WAIT).until(() -> plane.snapshot().get("w").states().equals(List.of("unknown")));
            assertThat(counter("kvroute.kv.events.replay.timeouts", null, null)).isEqualTo(1);
        }
    }

    /**
     * A catch-up lost on the way (request or answers) is asked for again, from 0, on a fresh replay socket.
     * The plane runs on a clock the test moves: the lost request times out, the retry waits out its
     * backoff, and the retry itself cannot time out however slow this machine is.
     */
    @Test
    void unansweredReplay_isAskedForAgain_andItsAnswerMakesTheWorkerExact() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        AtomicLong nowNanos = new AtomicLong();
        startPlane(KvEventsConfig.defaults().withReplayTimeout(timeout), nowNanos::get);
        try (FakeEngine e = new FakeEngine()) {
            goLive(e, 11);
            e.send(3, 44); // 1 and 2 lost
            Object[] lost = e.awaitRequest(); // and never answered
            assertThat(lost[1]).isEqualTo(1L);
            nowNanos.addAndGet(timeout.toNanos() + 1);
            await().atMost(WAIT).until(() -> counter("kvroute.kv.events.replay.timeouts", null, null) == 1);
            await().atMost(WAIT).until(() -> plane.snapshot().get("w").states().equals(List.of("unknown")));
            nowNanos.addAndGet(timeout.toNanos()); // the first retry's backoff is one replay timeout
            Object[] retry = e.awaitRequest();
            assertThat(retry[1]).isEqualTo(0L);
            long[] history = {11, 22, 33, 44};
            for (int seq = 0; seq < history.length; seq++) {
                e.answer((byte[]) retry[0], seq, batch(history[seq]));
            }
            e.end((byte[]) retry[0]);
            await().atMost(WAIT).until(() -> plane.snapshot().get("w").live()
                    && matched(new long[] {11, 22, 33, 44}, "w") == 4);
            assertThat(counter("kvroute.kv.events.replay.timeouts", null, null)).isEqualTo(1);
            assertThat(counter("kvroute.kv.events.replays", "outcome", "completed")).isEqualTo(2); // catch-up, retry
        }
    }

    @Test
    void restart_seqBackwards_clearsTheOldBlocks() throws Exception {
        startPlane(KvEventsConfig.defaults());
        try (FakeEngine e = new FakeEngine()) {
            goLive(e, 11);
            e.send(1, 22);
            await().atMost(WAIT).until(() -> matched(new long[] {11, 22}, "w") == 2);
            e.pub.sendMore("kv"); // a new engine process: seq starts over, at a later time
            e.pub.sendMore(seqFrame(0));
            e.pub.send(Msgpack.pack(p -> {
                p.packArrayHeader(3).packDouble(1.0).packArrayHeader(1);
                p.packArrayHeader(7).packString("BlockStored").packArrayHeader(1).packLong(77);
                p.packNil().packArrayHeader(0).packInt(BS).packNil().packString("GPU");
                p.packInt(0);
            }));
            await().atMost(WAIT).until(() -> matched(new long[] {77}, "w") == 1);
            assertThat(matched(new long[] {11, 22}, "w")).isZero();
            assertThat(plane.snapshot().get("w").live()).isTrue();
        }
    }

    @Test
    void blockSizeMismatch_isRefusedAndCounted_andSilenceIsReported() throws Exception {
        startPlane(KvEventsConfig.defaults().withSilence(Duration.ofMillis(400)));
        try (FakeEngine e = new FakeEngine()) {
            goLive(e, 11);
            byte[] wrongSize = Msgpack.pack(p -> {
                p.packArrayHeader(2).packDouble(0).packArrayHeader(1);
                p.packArrayHeader(5).packString("BlockStored").packArrayHeader(1).packLong(99).packNil()
                        .packArrayHeader(0).packInt(BS * 2);
            });
            e.pub.sendMore("kv");
            e.pub.sendMore(seqFrame(1));
            e.pub.send(wrongSize);
            await().atMost(WAIT).until(() -> counter("kvroute.kv.events.malformed", "reason", "block_size_mismatch") == 1);
            assertThat(matched(new long[] {99}, "w")).isZero();
            await().atMost(WAIT).until(() -> counter("kvroute.kv.events.silences", null, null) >= 1);
        }
    }
}
