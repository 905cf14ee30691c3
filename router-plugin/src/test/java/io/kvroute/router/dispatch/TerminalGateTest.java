package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TerminalGateTest {

    /**
     * A race between a decode chunk and the final error, replayed step by step. Before the gate, PdDispatch's
     * {@code onDecodeContent} checked {@code abandoned}, released the lock and wrote a chunk, while
     * {@code fail()} (a router shutdown, or a decode failure seen on another thread) checked
     * {@code finished} without claiming it and wrote the final error:
     * <ol>
     *   <li>decode thread: a stream chunk is ready and its write to the client starts;</li>
     *   <li>shutdown thread: {@code fail()} wants to write the SSE error event and complete the response;</li>
     *   <li>decode thread: the chunk write completes.</li>
     * </ol>
     * With no gate, step 2 issued a second write while the first was pending (Jetty refuses it:
     * the client never got the error, or got the chunk after the "last" write). With the gate, step 2
     * parks the terminal action, step 3 runs it, and a second terminal claim is refused.
     */
    @Test
    void terminalClaim_duringARelayWrite_waitsForIt_andRunsExactlyOnce() {
        TerminalGate gate = new TerminalGate();
        List<String> clientSaw = new ArrayList<>();

        assertThat(gate.beginWrite()).isTrue(); // 1: the chunk write is in flight
        clientSaw.add("chunk-write-started");

        boolean claimed = gate.claim(() -> clientSaw.add("error-event")); // 2: shutdown fails the exchange
        assertThat(claimed).isTrue();
        assertThat(clientSaw).as("no second write while the first is pending").containsExactly("chunk-write-started");

        clientSaw.add("chunk-write-completed");
        gate.endWrite(); // 3: the parked terminal action runs now, after the chunk
        assertThat(clientSaw).containsExactly("chunk-write-started", "chunk-write-completed", "error-event");

        assertThat(gate.claim(() -> clientSaw.add("second-terminal"))).isFalse();
        assertThat(gate.beginWrite()).as("no relay write after the terminal one").isFalse();
        assertThat(clientSaw).hasSize(3);
    }

    @Test
    void claim_withNoWriteInFlight_runsAtOnce() {
        TerminalGate gate = new TerminalGate();
        AtomicInteger runs = new AtomicInteger();
        assertThat(gate.claim(runs::incrementAndGet)).isTrue();
        assertThat(runs).hasValue(1);
        assertThat(gate.isClosed()).isTrue();
    }

    /** Many threads race to end one exchange (decode done, prefill failed, shutdown, client gone): one wins. */
    @Test
    void concurrentClaims_runExactlyOneAction() throws Exception {
        for (int round = 0; round < 200; round++) {
            TerminalGate gate = new TerminalGate();
            AtomicInteger runs = new AtomicInteger();
            AtomicInteger wins = new AtomicInteger();
            int threads = 4;
            CyclicBarrier start = new CyclicBarrier(threads + 1);
            CountDownLatch done = new CountDownLatch(threads + 1);
            for (int t = 0; t < threads; t++) {
                new Thread(() -> {
                    await(start);
                    if (gate.claim(runs::incrementAndGet)) {
                        wins.incrementAndGet();
                    }
                    done.countDown();
                }).start();
            }
            // a relay writer racing the claims: either it writes before the terminal one, or it is refused
            new Thread(() -> {
                await(start);
                if (gate.beginWrite()) {
                    gate.endWrite();
                }
                done.countDown();
            }).start();
            done.await();
            assertThat(wins).hasValue(1);
            assertThat(runs).hasValue(1);
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
