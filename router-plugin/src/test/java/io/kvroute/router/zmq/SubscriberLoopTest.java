package io.kvroute.router.zmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** The shared ZeroMQ loop on real sockets: delivery, tasks, socket replacement, errors, and a quiet shutdown. */
class SubscriberLoopTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private final ZContext publishers = new ZContext();
    private final AtomicLong clock = new AtomicLong(5_000);

    @AfterEach
    void tearDown() {
        publishers.close();
    }

    /** Records what the loop hands it; {@code onIteration} runs the test's per-iteration action. */
    private static final class Recorder implements SubscriberLoop.Handler {
        final List<String> messages = new CopyOnWriteArrayList<>();
        final List<Long> iterationTimes = new CopyOnWriteArrayList<>();
        final AtomicInteger errors = new AtomicInteger();
        final AtomicReference<Thread> loopThread = new AtomicReference<>();
        final AtomicReference<Thread> stoppedOn = new AtomicReference<>();
        volatile Runnable onIteration = () -> { };
        volatile boolean throwOnNextMessage;

        @Override
        public void onIteration(long nowNanos) {
            loopThread.set(Thread.currentThread());
            if (iterationTimes.isEmpty() || iterationTimes.get(iterationTimes.size() - 1) != nowNanos) {
                iterationTimes.add(nowNanos);
            }
            onIteration.run();
        }

        @Override
        public void onMessage(SubscriberLoop.Subscription from, byte[][] frames, int count) {
            if (throwOnNextMessage) {
                throwOnNextMessage = false;
                throw new IllegalStateException("handler bug");
            }
            messages.add(from.owner() + ":" + count + ":" + new String(frames[count - 1], StandardCharsets.UTF_8));
        }

        @Override
        public void afterMessages() {
        }

        @Override
        public long pollTimeoutMillis() {
            return 10;
        }

        @Override
        public void onLoopError(RuntimeException e) {
            errors.incrementAndGet();
        }

        @Override
        public void onStopped() {
            stoppedOn.set(Thread.currentThread());
        }
    }

    private static SubscriberLoop.Settings settings() {
        return new SubscriberLoop.Settings("test-loop", 3, 16, 0);
    }

    private ZMQ.Socket publisher(String endpoint) {
        ZMQ.Socket pub = publishers.createSocket(SocketType.PUB);
        pub.bind(endpoint);
        return pub;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static void publish(ZMQ.Socket pub, String topic, String body) {
        pub.sendMore(topic);
        pub.send(body);
    }

    @Test
    void messagesFromEverySocket_reachTheHandlerWithTheirOwner_onTheLoopThread_onTheInjectedClock() {
        ZMQ.Socket a = publisher("tcp://127.0.0.1:*");
        ZMQ.Socket b = publisher("tcp://127.0.0.1:*");
        Recorder recorder = new Recorder();
        try (SubscriberLoop loop = new SubscriberLoop(settings(), clock::get, null)) {
            AtomicReference<Thread> taskThread = new AtomicReference<>();
            loop.execute(() -> {
                taskThread.set(Thread.currentThread());
                loop.subscribe(a.getLastEndpoint(), "t", 0, "a");
                loop.subscribe(b.getLastEndpoint(), "t", 0, "b");
            });
            loop.start(recorder);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
                publish(a, "t", "x");
                publish(b, "t", "y");
                publish(a, "other", "z"); // another topic: filtered by the SUB socket
                return recorder.messages.contains("a:2:x") && recorder.messages.contains("b:2:y");
            });
            assertThat(recorder.messages).noneMatch(m -> m.endsWith(":z"));
            assertThat(taskThread.get()).isSameAs(recorder.loopThread.get());
            clock.set(7_000);
            await().atMost(WAIT).until(() -> recorder.iterationTimes.contains(7_000L));
            assertThat(recorder.iterationTimes).containsExactly(5_000L, 7_000L);
        }
    }

    @Test
    void aReopenedSocket_receivesAgain_andAHandlerErrorDoesNotStopTheLoop() {
        ZMQ.Socket pub = publisher("tcp://127.0.0.1:*");
        Recorder recorder = new Recorder();
        AtomicReference<SubscriberLoop.Subscription> sub = new AtomicReference<>();
        try (SubscriberLoop loop = new SubscriberLoop(settings(), clock::get, null)) {
            loop.execute(() -> sub.set(loop.subscribe(pub.getLastEndpoint(), "", 0, "p")));
            loop.start(recorder);
            recorder.throwOnNextMessage = true;
            await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
                publish(pub, "t", "before");
                return recorder.messages.contains("p:2:before");
            });
            assertThat(recorder.errors).hasValue(1);
            loop.execute(() -> sub.get().reopen());
            recorder.messages.clear();
            await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
                publish(pub, "t", "after");
                return recorder.messages.contains("p:2:after");
            });
            java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
            loop.execute(() -> {
                sub.get().close();
                closed.countDown();
            });
            assertThat(closed.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            for (int i = 0; i < 20; i++) {
                publish(pub, "t", "closed");
                sleep(10);
            }
            assertThat(recorder.messages).doesNotContain("p:2:closed");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        assertThat(recorder.stoppedOn.get()).isSameAs(recorder.loopThread.get());
    }

    /**
     * A connecting JeroMQ socket stalls in the handshake in a few percent of loopback connects, until the
     * handshake interval fails the connection (JeroMQ's default: 30 s). A hundred fresh connections in a row
     * (a stall in most runs) must each hear the publisher within a
     * few seconds: a socket left at the default interval misses this by tens of seconds.
     */
    @Test
    void everyFreshSocket_hearsThePublisherWithinSeconds_evenWhenItsHandshakeStalls() throws Exception {
        ZMQ.Socket pub = publisher("tcp://127.0.0.1:*");
        Recorder recorder = new Recorder();
        AtomicReference<SubscriberLoop.Subscription> sub = new AtomicReference<>();
        Duration perConnect = Duration.ofMillis(SubscriberLoop.HANDSHAKE_TIMEOUT_MILLIS * 3L);
        try (SubscriberLoop loop = new SubscriberLoop(settings(), clock::get, null)) {
            loop.execute(() -> sub.set(loop.subscribe(pub.getLastEndpoint(), "", 0, "p")));
            loop.start(recorder);
            for (int round = 0; round < 100; round++) {
                String body = "round-" + round;
                if (round > 0) {
                    loop.execute(() -> sub.get().reopen());
                }
                await("round " + round).atMost(perConnect).pollInterval(Duration.ofMillis(5)).until(() -> {
                    publish(pub, "t", body);
                    return recorder.messages.contains("p:2:" + body);
                });
            }
        }
    }

    /**
     * Shutdown with one SUB receiving from a live publisher and one reconnecting to a port nobody listens on:
     * the loop closes its sockets (linger 0) on its own thread before closing its context, and nothing lands
     * on standard error (Jetty's module test fails on any "Exception" in the server's output).
     */
    @Test
    void close_stopsTheThreadWithoutInterrupting_andPrintsNothing() throws Exception {
        ZMQ.Socket pub = publisher("tcp://127.0.0.1:*");
        ZMQ.Socket gone = publisher("tcp://127.0.0.1:*");
        String deadEndpoint = gone.getLastEndpoint();
        publishers.destroySocket(gone);
        PrintStream realErr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            for (int round = 0; round < 5; round++) {
                Recorder recorder = new Recorder();
                SubscriberLoop loop = new SubscriberLoop(settings(), clock::get, null);
                loop.execute(() -> {
                    loop.subscribe(pub.getLastEndpoint(), "", 0, "live");
                    loop.subscribe(deadEndpoint, "", 0, "dead");
                });
                loop.start(recorder);
                await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> {
                    publish(pub, "t", "m");
                    return !recorder.messages.isEmpty();
                });
                Thread caller = Thread.currentThread();
                loop.close();
                assertThat(loop.isAlive()).isFalse();
                assertThat(caller.isInterrupted()).isFalse();
                assertThat(recorder.stoppedOn.get()).isSameAs(recorder.loopThread.get());
            }
            Thread.sleep(200); // let any late IO-thread report arrive
        } finally {
            System.setErr(realErr);
        }
        assertThat(err.toString(StandardCharsets.UTF_8)).doesNotContain("Exception");
    }
}
