package io.kvroute.scheduler.report;

import io.kvroute.protocol.LoadStat;
import io.kvroute.protocol.LoadStatWire;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Real PUB sockets, read with a raw SUB; the slow joiner is handled by publishing until received. */
class LoadPublisherTest {

    @Test
    void rankEndpoints_fixedPortCountsUpAndWildcardPicksFreePorts() {
        assertThat(LoadPublisher.rankEndpoints("tcp://*:5560", 3))
                .containsExactly("tcp://*:5560", "tcp://*:5561", "tcp://*:5562");
        assertThat(LoadPublisher.rankEndpoints("tcp://127.0.0.1:0", 2))
                .containsExactly("tcp://127.0.0.1:*", "tcp://127.0.0.1:*");
        assertThat(LoadPublisher.rankEndpoints("inproc://load", 1)).containsExactly("inproc://load");
        assertThat(LoadPublisher.rankEndpoints("inproc://load", 2)).containsExactly("inproc://load-0", "inproc://load-1");
        assertThatThrownBy(() -> LoadPublisher.rankEndpoints("localhost:5560", 1)).hasMessageContaining("localhost:5560");
        assertThatThrownBy(() -> LoadPublisher.rankEndpoints("tcp://*:65535", 2)).hasMessageContaining("out of range");
    }

    @Test
    void publishes_threeFramesWithMonotonicSeqPerRank_overTcp() {
        AtomicLong clock = new AtomicLong();
        LoadPublisher.Options opts = LoadPublisher.Options.defaults().withEverySteps(1).withNanoClock(clock::get);
        try (ZContext ctx = new ZContext();
             LoadPublisher pub = LoadPublisher.bind("tcp://127.0.0.1:*", 2, opts)) {
            List<String> eps = pub.endpoints();
            assertThat(eps).hasSize(2).allMatch(e -> e.startsWith("tcp://127.0.0.1:") && !e.endsWith(":*"));
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.subscribe("load".getBytes());
            sub.setReceiveTimeOut(50);
            sub.connect(eps.get(1));
            // Slow joiner: keep publishing changing stats until one arrives; the first ones may be lost.
            byte[][] frames = null;
            int waiting = 0;
            for (int i = 1; i <= 400 && frames == null; i++) {
                pub.onStep(LoadStat.base(1, waiting++, 10, 100, 1));
                frames = recv(sub);
                if (frames == null && i % 40 == 0) {
                    // JeroMQ 0.6.0 SUB connections occasionally stall in the handshake for good (seen
                    // 4 in 150 loopback runs: TCP established, greeting unread). Not the publisher's
                    // fault; a new SUB recovers, as LoadPlane's watchdog does.
                    sub.close();
                    sub = ctx.createSocket(SocketType.SUB);
                    sub.subscribe("load".getBytes());
                    sub.setReceiveTimeOut(50);
                    sub.connect(eps.get(1));
                }
            }
            assertThat(frames).as("a report within 400 steps; sent=%d sendErrors=%d endpoints=%s",
                    pub.sentCount(), pub.sendErrorCount(), eps).isNotNull();
            assertThat(new String(frames[0])).isEqualTo("load");
            assertThat(frames[1]).hasSize(8);
            long lastSeq = ByteBuffer.wrap(frames[1]).getLong();
            for (byte[][] late = recv(sub); late != null; late = recv(sub)) {
                lastSeq = ByteBuffer.wrap(late[1]).getLong(); // reports stepped while joining
            }
            // After the join every report arrives, in order, seq + 1 each time.
            for (int k = 1; k <= 20; k++) {
                pub.onStep(LoadStat.base(1, 1000 + k, 10, 100, 1));
                byte[][] next = recvBlocking(sub);
                assertThat(ByteBuffer.wrap(next[1]).getLong()).isEqualTo(lastSeq + 1);
                lastSeq++;
                assertThat(next[2]).isEqualTo(LoadStatWire.payload(LoadStat.base(1, 1000 + k, 10, 100, 1)));
            }
        }
    }

    @Test
    void unchangedStat_isNotResentWithinTheInterval_butIsAfterIt() {
        AtomicLong clock = new AtomicLong();
        LoadPublisher.Options opts = LoadPublisher.Options.defaults().withEverySteps(1)
                .withResendInterval(Duration.ofSeconds(1)).withNanoClock(clock::get);
        try (ZContext ctx = new ZContext();
             LoadPublisher pub = LoadPublisher.bind("inproc://load-resend", 1, opts.withContext(ctx))) {
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.subscribe("load".getBytes());
            sub.setReceiveTimeOut(50);
            sub.connect(pub.endpoints().get(0));
            int w = 0;
            byte[][] got = null;
            while (got == null) {
                clock.addAndGet(1);
                pub.onStep(LoadStat.base(0, w++, 0, 0, 0));
                got = recv(sub);
            }
            while (recv(sub) != null) {
                // drain reports sent while joining
            }
            long sentBefore = pub.sentCount();
            LoadStat same = LoadStat.base(5, 5, 5, 5, 0);
            pub.onStep(same);
            assertThat(recvBlocking(sub)[2]).isEqualTo(LoadStatWire.payload(same));
            for (int i = 0; i < 50; i++) {
                clock.addAndGet(10_000_000L); // 10 ms per step, 0.5 s in all
                pub.onStep(same);
            }
            assertThat(recv(sub)).isNull();
            clock.addAndGet(600_000_000L);
            pub.onStep(same);
            assertThat(recvBlocking(sub)[2]).isEqualTo(LoadStatWire.payload(same));
            assertThat(pub.sentCount() - sentBefore).isEqualTo(2);
        }
    }

    @Test
    void bindingABusyPort_failsWithTheEndpointInTheMessage() {
        try (LoadPublisher first = LoadPublisher.bind("tcp://127.0.0.1:*", 1)) {
            String taken = first.endpoints().get(0);
            assertThatThrownBy(() -> LoadPublisher.bind(taken, 1))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining(taken);
        }
    }

    @Test
    void onStep_rejectsARankOutsideDpSize() {
        try (LoadPublisher pub = LoadPublisher.bind("tcp://127.0.0.1:*", 1)) {
            assertThatThrownBy(() -> pub.onStep(LoadStat.base(0, 0, 0, 0, 1))).hasMessageContaining("rank 1");
        }
    }

    private static byte[][] recv(ZMQ.Socket sub) {
        byte[] topic = sub.recv();
        if (topic == null) {
            return null;
        }
        byte[] seq = sub.recv();
        byte[] payload = sub.recv();
        assertThat(sub.hasReceiveMore()).isFalse();
        return new byte[][] {topic, seq, payload};
    }

    private static byte[][] recvBlocking(ZMQ.Socket sub) {
        for (int i = 0; i < 100; i++) {
            byte[][] f = recv(sub);
            if (f != null) {
                return f;
            }
        }
        throw new AssertionError("no report within 5 s");
    }
}
