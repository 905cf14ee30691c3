package io.kvroute.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.scheduler.report.LoadPublisher;
import io.kvroute.protocol.LoadStat;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The load plane over real JeroMQ sockets (tcp loopback and inproc), fed by the real engine-side
 * {@link LoadPublisher} or by a raw PUB socket for hostile input. Every test first publishes until
 * a report gets through (the slow-joiner window loses the first ones) and asserts only after that.
 */
class LoadPlaneTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration RESUBSCRIBE_AFTER = Duration.ofSeconds(1);
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final ZContext ctx = new ZContext();
    private LoadPlane plane;

    @AfterEach
    void tearDown() {
        if (plane != null) {
            plane.close();
        }
        ctx.close();
    }

    private LoadPlane startPlane() {
        // Resubscribe after 1 s of silence on the injected clock: publishUntilSeen moves the clock that far
        // when a tcp report does not get through, which recovers a stalled JeroMQ handshake.
        plane = new LoadPlane(LoadPlaneConfig.defaults().withPollTimeout(Duration.ofMillis(10))
                .withResubscribeAfter(RESUBSCRIBE_AFTER), clock::get, registry, ctx);
        plane.start();
        return plane;
    }

    private static LoadPublisher.Options everyStep(ZContext ctx) {
        return LoadPublisher.Options.defaults().withEverySteps(1).withContext(ctx);
    }

    /**
     * Steps the publisher with a changing stat until the plane shows {@code target} for the worker,
     * then waits until nothing is in flight; the last report sent, and so applied, is the target.
     */
    private void publishUntilSeen(LoadPublisher pub, String worker, LoadStat target) {
        int[] i = {0};
        boolean tcp = pub.endpoints().get(0).startsWith("tcp:");
        long[] nudgeAt = {System.nanoTime() + 3_000_000_000L};
        await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
            if (tcp && System.nanoTime() - nudgeAt[0] > 0) {
                // a stalled JeroMQ handshake (see SubscriberLoop) recovers when the plane's clock says the
                // worker was silent for resubscribeAfter: move the injected clock that far
                nudgeAt[0] = System.nanoTime() + 3_000_000_000L;
                clock.addAndGet(RESUBSCRIBE_AFTER.toNanos());
            }
            pub.onStep(LoadStat.base(0, 10_000 + i[0]++, 0, 0, target.attnDpRank()));
            pub.onStep(target);
            return plane.snapshot().table().get(worker) != null
                    && plane.snapshot().table().get(worker).rank(target.attnDpRank()) != null
                    && plane.snapshot().table().get(worker).rank(target.attnDpRank()).report().numWaitingReqs()
                    == target.numWaitingReqs();
        });
        awaitQuiet();
    }

    /**
     * Waits until the plane has published no new table for 100 ms: reports stepped inside
     * {@link #publishUntilSeen} may still be in flight when it returns, and one landing after the
     * test moves the fake clock would be stamped with the new time.
     */
    private void awaitQuiet() {
        long v;
        do {
            v = plane.snapshot().version();
            sleep(100);
        } while (plane.snapshot().version() != v);
    }

    @Test
    void roundTrip_overTcp_fromTheRealPublisher() {
        startPlane();
        try (LoadPublisher pub = LoadPublisher.bind("tcp://127.0.0.1:*", 1, everyStep(null))) {
            plane.addWorker("http://w1:8000", pub.endpoints());
            LoadStat stat = new LoadStat(3, 4, 500, 1000, 0, new LoadStat.Extension(700, 600, 64, 10, 10));
            publishUntilSeen(pub, "http://w1:8000", stat);
            WorkerLoad l = plane.snapshot().fresh("http://w1:8000").orElseThrow();
            assertThat(l.numRunningReqs()).isEqualTo(3);
            assertThat(l.numWaitingReqs()).isEqualTo(4);
            assertThat(l.numTokens()).isEqualTo(500);
            assertThat(l.maxTotalNumTokens()).isEqualTo(1000);
            assertThat(l.numWaitingUncachedTokens()).isEqualTo(700);
            assertThat(l.numTotalTokens()).isEqualTo(600);
            assertThat(l.maxRunningRequests()).isEqualTo(64);
            assertThat(l.capturedAtNanos()).isEqualTo(clock.get());
            assertThat(registry.get("kvroute.load.reports.received").counter().count()).isPositive();
            assertThat(registry.get("kvroute.load.workers.fresh").gauge().value()).isEqualTo(1.0);
        }
    }

    @Test
    void multiRank_overInproc_workerIsUnknownUntilEveryRankReportsAndGoesUnknownWhenOneRankStalls() {
        startPlane();
        try (LoadPublisher pub = LoadPublisher.bind("inproc://multi", 2, everyStep(ctx))) {
            plane.addWorker("w", pub.endpoints());
            publishUntilSeen(pub, "w", LoadStat.base(1, 2, 10, 100, 0));
            assertThat(plane.snapshot().fresh("w")).isEmpty();
            assertThat(plane.view().get(0)).containsEntry("fresh", false).containsEntry("ranks_reported", 1);

            clock.addAndGet(3_000_000_000L);
            publishUntilSeen(pub, "w", LoadStat.base(3, 4, 20, 100, 1));
            WorkerLoad l = plane.snapshot().fresh("w").orElseThrow();
            assertThat(l.numRunningReqs()).isEqualTo(4);
            assertThat(l.numWaitingReqs()).isEqualTo(6);
            assertThat(l.numTokens()).isEqualTo(30);

            // Rank 1 keeps reporting; rank 0 (last seen 3 s ago) passes the 5 s window.
            clock.addAndGet(2_500_000_000L);
            publishUntilSeen(pub, "w", LoadStat.base(3, 5, 20, 100, 1));
            assertThat(plane.snapshot().fresh("w")).isEmpty();
            assertThat(plane.snapshot().pressureSource("w")).isEqualTo(PressureSource.ROUTER_LOCAL);
            assertThat(registry.get("kvroute.load.workers.fresh").gauge().value()).isZero();
        }
    }

    @Test
    void staleness_onTheFakeClock_flipsFreshAtTheWindow() {
        startPlane();
        try (LoadPublisher pub = LoadPublisher.bind("inproc://stale", 1, everyStep(ctx))) {
            plane.addWorker("w", pub.endpoints());
            publishUntilSeen(pub, "w", LoadStat.base(1, 1, 1, 1, 0));
            long arrived = plane.snapshot().table().get("w").rank(0).receivedAtNanos();
            clock.set(arrived + 5_000_000_000L);
            assertThat(plane.snapshot().fresh("w")).isPresent();
            assertThat(registry.get("kvroute.load.report.age").tag("worker", "w").gauge().value()).isEqualTo(5.0);
            clock.set(arrived + 5_000_000_001L);
            assertThat(plane.snapshot().fresh("w")).isEmpty();
            Map<String, Object> v = plane.view().get(0);
            assertThat(v).containsEntry("url", "w").containsEntry("fresh", false).containsEntry("age_ms", 5000L)
                    .containsEntry("pressure_source", "router_local").containsEntry("num_waiting_reqs", 1);
        }
    }

    @Test
    void garbageAndMalformedFrames_areDroppedAndCountedAndTheThreadKeepsGoing() throws Exception {
        startPlane();
        ZMQ.Socket pub = ctx.createSocket(SocketType.PUB);
        pub.bind("inproc://garbage");
        plane.addWorker("w", List.of("inproc://garbage"));
        long[] seq = {0};
        await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
            send(pub, "load", seq[0]++, GoldenVectorsDecodeTest.resource("base_idle.msgpack"));
            return plane.snapshot().isFresh("w");
        });
        // Every invalid golden vector, then frame-level defects, then reports claiming ranks 3 and 1:
        // keyed by the socket they came on (rank 0), so not dropped.
        String[] invalid = {"unknown_tag", "map_not_array", "string_field",
            "negative_field", "float_field", "truncated", "trailing_bytes", "garbage", "empty"};
        for (String name : invalid) {
            send(pub, "load", seq[0]++, GoldenVectorsDecodeTest.resource(name + ".msgpack"));
        }
        pub.send("load"); // one frame only
        pub.sendMore("load");
        pub.sendMore(new byte[3]); // short seq
        pub.send(GoldenVectorsDecodeTest.resource("base_idle.msgpack"));
        send(pub, "load", seq[0]++, GoldenVectorsDecodeTest.resource("base_large_values.msgpack")); // rank 3
        send(pub, "load", seq[0]++, GoldenVectorsDecodeTest.resource("base_busy_capacity_unknown.msgpack")); // rank 1
        byte[] last = GoldenVectorsDecodeTest.resource("ext_prefill_backlog.msgpack"); // rank 0, waiting 7
        send(pub, "load", seq[0]++, last);
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w").map(WorkerLoad::numWaitingReqs).orElse(-1) == 7);
        assertThat(malformed("unknown_tag")).isEqualTo(1);
        assertThat(malformed("wrong_arity")).isZero();
        assertThat(malformed("not_array")).isEqualTo(1);
        assertThat(malformed("bad_field")).isEqualTo(3);
        assertThat(malformed("truncated")).isEqualTo(2);
        assertThat(malformed("trailing_bytes")).isEqualTo(1);
        assertThat(malformed("garbage")).isEqualTo(1);
        assertThat(malformed("bad_frames")).isEqualTo(2);
        assertThat(malformed("rank_out_of_range")).isZero();
        assertThat(registry.get("kvroute.load.loop.errors").counter().count()).isZero();
        // Seqs were consumed by dropped messages, so the accepted report after them shows a gap.
        assertThat(registry.get("kvroute.load.seq.gaps").counter().count()).isEqualTo(1);
    }

    /**
     * SGLang's contract: one SUB per rank at {@code load_endpoint_port_base + r}; a report belongs to
     * the rank of its socket whatever its {@code attn_dp_rank} says (here null, or a wrong 1); the
     * topic frame's value is not checked; seq -1 is dropped without a gap; a report whose per-rank
     * sum overflows an int is applied clamped and counted as malformed.
     */
    @Test
    void reportsAreKeyedByTheirSocket_seqMinusOneIsNoGap_andOverflowingSumsClampAndCount() throws Exception {
        startPlane();
        ZMQ.Socket pub0 = ctx.createSocket(SocketType.PUB);
        pub0.bind("inproc://rank0");
        ZMQ.Socket pub1 = ctx.createSocket(SocketType.PUB);
        pub1.bind("inproc://rank1");
        plane.addWorker("w", List.of("inproc://rank0", "inproc://rank1"), 2, "load");
        byte[] nullRank = hand("null_rank"); // running 5, rank nil
        byte[] claimsRank2 = hand("extended_plus_one"); // running 1, claims rank 2
        long[] seq = {0};
        await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
            send(pub0, "load-anything", seq[0], nullRank);
            send(pub1, "load", seq[0]++, claimsRank2);
            return plane.snapshot().isFresh("w");
        });
        assertThat(plane.snapshot().fresh("w").orElseThrow().numRunningReqs()).isEqualTo(6);
        double gaps = registry.get("kvroute.load.seq.gaps").counter().count();
        long last = seq[0] - 1; // both ranks' latest seq
        send(pub0, "load", -1, hand("base_rank1")); // END_SEQ: not a report, not a gap
        send(pub0, "load", last + 1, nullRank);
        // rank 1 now reports 2^31 - 1 running: the sum with rank 0's 5 overflows an int
        byte[] huge = java.util.HexFormat.of().parseHex("96a84c6f616453746174" + "ce7fffffff" + "00000000");
        send(pub1, "load", last + 1, huge);
        await().atMost(WAIT).until(() -> plane.snapshot().fresh("w").map(WorkerLoad::numRunningReqs).orElse(0)
                == Integer.MAX_VALUE);
        assertThat(malformed("sum_overflow")).isEqualTo(1);
        assertThat(registry.get("kvroute.load.seq.gaps").counter().count()).isEqualTo(gaps);
        assertThat(malformed("rank_out_of_range")).isZero();
    }

    private static byte[] hand(String name) {
        return io.kvroute.scheduler.report.HandLoadVectors.all().stream().filter(v -> v.name().equals(name))
                .findFirst().orElseThrow().payload();
    }

    @Test
    void seqGaps_areCountedWithTheirSize() throws Exception {
        startPlane();
        ZMQ.Socket pub = ctx.createSocket(SocketType.PUB);
        pub.bind("inproc://gaps");
        plane.addWorker("w", List.of("inproc://gaps"));
        long[] seq = {100};
        await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
            send(pub, "load", seq[0]++, GoldenVectorsDecodeTest.resource("base_idle.msgpack"));
            return plane.snapshot().isFresh("w");
        });
        await().atMost(WAIT).until(() -> {
            // let any in-flight join-phase sends land before measuring
            return plane.snapshot().table().get("w").rank(0).report().seq() == seq[0] - 1;
        });
        double gapsBefore = registry.get("kvroute.load.seq.gaps").counter().count();
        long s = seq[0];
        send(pub, "load", s + 1, GoldenVectorsDecodeTest.resource("base_idle.msgpack")); // s missing
        send(pub, "load", s + 5, GoldenVectorsDecodeTest.resource("base_idle.msgpack")); // s+2..s+4 missing
        await().atMost(WAIT).until(() -> plane.snapshot().table().get("w").rank(0).report().seq() == s + 5);
        assertThat(registry.get("kvroute.load.seq.gaps").counter().count() - gapsBefore).isEqualTo(2);
        assertThat(plane.view().get(0).get("missed_reports")).isEqualTo(4L);
    }

    /**
     * A restart is recognised by seq going backwards; ZeroMQ reconnects the SUB by itself. (A
     * restarted publisher whose first delivered seq is above the last one seen is indistinguishable
     * from a gap and counts as one; see docs/load-report-protocol.md.)
     */
    @Test
    void publisherRestartedOnTheSamePort_isPickedUpWithoutCountingAGap() {
        startPlane();
        String endpoint;
        try (LoadPublisher first = LoadPublisher.bind("tcp://127.0.0.1:*", 1, everyStep(null))) {
            endpoint = first.endpoints().get(0);
            plane.addWorker("w", List.of(endpoint));
            publishUntilSeen(first, "w", LoadStat.base(1, 1, 1, 1, 0));
            // Run the first publisher's seq well past what a new publisher loses while joining
            // (PUB/SUB's slow joiner: 0-235 messages in trials on a 2-core box), so its restart shows
            // as seq going backwards.
            int[] i = {0};
            await().atMost(WAIT).pollInterval(Duration.ofMillis(1)).until(() -> {
                first.onStep(LoadStat.base(1, 2 + (i[0]++ % 2), 1, 1, 0)); // handoff conflates; seq counts sends
                return plane.snapshot().table().get("w").rank(0).report().seq() >= 500;
            });
        }
        double gapsBefore = registry.get("kvroute.load.seq.gaps").counter().count();
        LoadPublisher second = null;
        for (int attempt = 0; second == null; attempt++) {
            try {
                second = LoadPublisher.bind(endpoint, 1, everyStep(null));
            } catch (IllegalStateException portNotYetFree) {
                assertThat(attempt).as("rebind " + endpoint).isLessThan(50);
                sleep(100);
            }
        }
        try (LoadPublisher restarted = second) {
            publishUntilSeen(restarted, "w", LoadStat.base(2, 42, 2, 2, 0));
            assertThat(plane.snapshot().fresh("w").orElseThrow().numWaitingReqs()).isEqualTo(42);
            assertThat(registry.get("kvroute.load.seq.gaps").counter().count()).isEqualTo(gapsBefore);
        }
    }

    @Test
    void workersAddedAndRemovedAtRuntime_followMembership() {
        startPlane();
        try (LoadPublisher a = LoadPublisher.bind("inproc://a", 1, everyStep(ctx));
             LoadPublisher b = LoadPublisher.bind("inproc://b", 1, everyStep(ctx))) {
            plane.addWorker("a", a.endpoints());
            publishUntilSeen(a, "a", LoadStat.base(0, 1, 0, 0, 0));
            plane.addWorker("b", b.endpoints());
            publishUntilSeen(b, "b", LoadStat.base(0, 2, 0, 0, 0));
            assertThat(plane.snapshot().workerIds()).containsExactly("a", "b");
            assertThat(registry.find("kvroute.load.report.age").tag("worker", "a").gauge()).isNotNull();

            long version = plane.snapshot().version();
            plane.removeWorker("a");
            await().atMost(WAIT).until(() -> plane.snapshot().workerIds().equals(List.of("b")));
            assertThat(plane.snapshot().version()).isGreaterThan(version);
            assertThat(plane.snapshot().fresh("a")).isEmpty();
            assertThat(registry.find("kvroute.load.report.age").tag("worker", "a").gauge()).isNull();
            for (int i = 0; i < 20; i++) {
                a.onStep(LoadStat.base(0, 100 + i, 0, 0, 0)); // no longer subscribed: no effect
            }
            publishUntilSeen(b, "b", LoadStat.base(0, 3, 0, 0, 0));
            assertThat(plane.snapshot().workerIds()).containsExactly("b");

            plane.addWorker("a", a.endpoints());
            publishUntilSeen(a, "a", LoadStat.base(0, 5, 0, 0, 0));
            assertThat(plane.snapshot().workerIds()).containsExactly("b", "a");
            assertThat(plane.snapshot().fresh("a").map(WorkerLoad::numWaitingReqs)).isEqualTo(Optional.of(5));
        }
    }

    /** The watchdog runs on the injected clock, like every other time of the plane. */
    @Test
    void silentWorker_getsANewSocketOnceSilentForResubscribeAfterOnTheInjectedClock_andIsPickedUpAgain() {
        startPlane();
        try (LoadPublisher pub = LoadPublisher.bind("tcp://127.0.0.1:*", 1, everyStep(null))) {
            plane.addWorker("w", pub.endpoints());
            publishUntilSeen(pub, "w", LoadStat.base(0, 1, 0, 0, 0));
            double before = registry.get("kvroute.load.resubscribes").counter().count();
            sleep(RESUBSCRIBE_AFTER.toMillis() + 500); // real time passes, the injected clock stands still
            assertThat(registry.get("kvroute.load.resubscribes").counter().count()).isEqualTo(before);
            clock.addAndGet(RESUBSCRIBE_AFTER.toNanos() - 1); // silent for just under resubscribeAfter
            sleep(300);
            assertThat(registry.get("kvroute.load.resubscribes").counter().count()).isEqualTo(before);
            clock.addAndGet(1);
            await().atMost(WAIT).until(() -> registry.get("kvroute.load.resubscribes").counter().count() > before);
            publishUntilSeen(pub, "w", LoadStat.base(0, 2, 0, 0, 0));
            assertThat(plane.snapshot().fresh("w").map(WorkerLoad::numWaitingReqs)).isEqualTo(Optional.of(2));
        }
    }

    private double malformed(String reason) {
        return registry.get("kvroute.load.reports.malformed").tag("reason", reason).counter().count();
    }

    private static void send(ZMQ.Socket pub, String topic, long seq, byte[] payload) {
        pub.sendMore(topic);
        pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
        pub.send(payload);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
