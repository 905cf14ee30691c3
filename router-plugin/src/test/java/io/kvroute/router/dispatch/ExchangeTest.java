package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

class ExchangeTest {

    private final FakeClock clock = new FakeClock();
    private final List<RequestOutcome> outcomes = new CopyOnWriteArrayList<>();
    private final List<String> terminalActions = new CopyOnWriteArrayList<>();

    private Exchange exchange(CoreFixture.RecordingSink sink, boolean streaming) {
        return new Exchange(sink, "/v1/completions", streaming, clock.nanoTime(), clock, outcomes::add,
                () -> terminalActions.add("untracked"));
    }

    /**
     * Racing endings: a prefill failure, a decode completion and the client going away all try to
     * end the same request from different threads at once. Exactly one wins: one sink terminal
     * call, one outcome, one untracking.
     */
    @RepeatedTest(20)
    void terminalTransition_happensExactlyOnceUnderRacingEndings() throws Exception {
        CoreFixture.RecordingSink sink = new CoreFixture.RecordingSink();
        Exchange exchange = exchange(sink, true);
        CountDownLatch go = new CountDownLatch(1);
        Thread[] threads = {
            new Thread(() -> { await(go); exchange.fail(502, Failure.of(FailureKind.RESET), "prefill failed"); }),
            new Thread(() -> { await(go); exchange.complete(ByteBuffer.wrap("data: [DONE]\n\n".getBytes()), null); }),
            new Thread(() -> { await(go); exchange.clientGone(new IOException("gone")); }),
        };
        for (Thread t : threads) {
            t.start();
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(10_000);
        }
        assertThat(sink.terminalCalls()).isEqualTo(1);
        assertThat(outcomes).hasSize(1);
        assertThat(terminalActions).hasSize(1);
    }

    @Test
    void failBeforeTheFirstByte_dropsThePendingHeadForAJsonError() {
        CoreFixture.RecordingSink sink = new CoreFixture.RecordingSink();
        Exchange exchange = exchange(sink, true);
        exchange.status(200);
        exchange.header("Content-Type", "text/event-stream");
        exchange.header("Cache-Control", "no-cache");
        exchange.fail(504, Failure.of(FailureKind.TIMEOUT), "too slow");
        assertThat(sink.status).isEqualTo(504);
        assertThat(sink.headers).containsExactly(java.util.Map.entry("Content-Type", "application/json"));
        assertThat(sink.text()).contains("\"type\":\"upstream_timeout\"").contains("\"code\":504");
    }

    @Test
    void failAfterTheFirstByte_abortsAPlainBodyInsteadOfAShort200() {
        CoreFixture.RecordingSink sink = new CoreFixture.RecordingSink();
        Exchange exchange = exchange(sink, false);
        exchange.write(ByteBuffer.wrap("{\"partial\":".getBytes()), Completion.of(() -> { }, x -> { }));
        exchange.fail(502, Failure.of(FailureKind.RESET), "broke");
        assertThat(sink.calls).containsExactly("begin", "write", "abort");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
