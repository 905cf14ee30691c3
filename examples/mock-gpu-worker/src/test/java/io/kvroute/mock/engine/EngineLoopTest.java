package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The facts the mock's engine loops rest on, each on the fake clock through the real
 * {@link EngineCore}:
 * step composition per loop, full prefix hits as decode requests, the processed-prefill counter and
 * the prefill busy time counting prefill work only, {@code num_total_tokens} with reservations, and
 * a first segment never promoted by a cache hit.
 */
class EngineLoopTest {

    private final FakeClock clock = new FakeClock();

    private RecordingSink submit(EngineCore core, String id, int[] ids, int maxNew, int segmentIndex) {
        RecordingSink sink = new RecordingSink(clock);
        core.submit(new EngineRequest(id, ids, maxNew, true, false, segmentIndex), sink);
        return sink;
    }

    private static void drain(EngineCore core) throws InterruptedException {
        for (int i = 0; i < 100_000 && core.hasWork(); i++) {
            core.runOnce();
        }
        assertThat(core.hasWork()).isFalse();
    }

    private static long counter(EngineCore core, String name) {
        @SuppressWarnings("unchecked")
        Map<String, Object> c = (Map<String, Object>) core.schedulerView().get("counters");
        return ((Number) c.get(name)).longValue();
    }

    @Test
    void fullPrefixHit_isADecodeRequest_itsDecodePassEmitsTheFirstToken() throws Exception {
        TimeModel time = new TimeModel(10, 7, 1, 1);
        EngineCore core = new EngineCore(EngineConfig.defaults().withKv(1 << 20, 1).withTimeModel(time), clock);
        int[] prompt = EngineCoreTest.ids(96, 3);
        submit(core, "warm", prompt, 1, 0);
        drain(core);
        long processedBefore = core.stats().processedPrefillTokens();
        double before = clock.millis();
        RecordingSink hit = submit(core, "hit", prompt, 2, 0);
        core.runOnce();
        assertThat(hit.cachedTokens).isEqualTo(95); // one uncached token
        assertThat(hit.tokens).hasSize(1);
        // a decode pass, not a 1-token prefill: decode time, and the prefill counter does not move
        assertThat(hit.firstTokenMillis - before).isCloseTo(time.stepMillis(0, true), offset(1e-9));
        assertThat(core.stats().processedPrefillTokens()).isEqualTo(processedBefore);
        drain(core);
        assertThat(hit.tokens).hasSize(2);
        assertThat(hit.usage).isEqualTo(new TokenSink.Usage(96, 2, 95));
    }

    @Test
    void lightllm_aPrefillPassHoldsNoDecode_sglang_oneMixedPassHoldsBoth() throws Exception {
        TimeModel time = new TimeModel(10, 7, 1, 1);
        for (EngineLoop loop : EngineLoop.values()) {
            FakeClock c = new FakeClock();
            EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(1024, 1024, 256).withTimeModel(time)
                    .withEngineLoop(loop), c);
            RecordingSink decoding = new RecordingSink(c);
            core.submit(new EngineRequest("d", EngineCoreTest.ids(100, 1), 50, true, false, 0), decoding);
            core.runOnce(); // d's prefill: it decodes from now on
            RecordingSink longOne = new RecordingSink(c);
            core.submit(new EngineRequest("long", EngineCoreTest.ids(4000, 2), 4, true, false, 0), longOne);
            double start = c.millis();
            core.runOnce();
            if (loop == EngineLoop.LIGHTLLM) {
                assertThat(decoding.tokens).as("decode waits").hasSize(1);
                assertThat(c.millis() - start).isCloseTo(time.stepMillis(1024, false), offset(1e-9));
            } else {
                assertThat(decoding.tokens).as("decode rides along").hasSize(2);
                // SGLang charges the running decode against the chunk: 1024 - 1 prefill tokens
                assertThat(core.stats().processedPrefillTokens()).isEqualTo(100 + 1023);
                assertThat(c.millis() - start).isCloseTo(time.stepMillis(1023, true), offset(1e-9));
            }
        }
    }

    @Test
    void processedCounter_andPrefillBusyTime_countSubmittedPrefillTokensOnly() throws Exception {
        TimeModel time = new TimeModel(10, 7, 1, 1);
        for (EngineLoop loop : EngineLoop.values()) {
            FakeClock c = new FakeClock();
            EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(1024, 1024, 256).withTimeModel(time)
                    .withEngineLoop(loop), c);
            core.submit(new EngineRequest("a", EngineCoreTest.ids(3000, 1), 20, true, false, 0), new RecordingSink(c));
            core.submit(new EngineRequest("b", EngineCoreTest.ids(500, 2), 20, true, false, 0), new RecordingSink(c));
            long prev = 0;
            int steps = 0;
            while (core.hasWork()) {
                core.runOnce();
                long now = core.stats().processedPrefillTokens();
                assertThat(now - prev).as("one step's prefill").isBetween(0L, 1024L);
                prev = now;
                steps++;
            }
            assertThat(core.stats().processedPrefillTokens()).as(loop + " counter").isEqualTo(3500);
            assertThat(core.stats().totalPrefillUncachedTokens()).isEqualTo(3500);
            // prefill compute only: 10 ms per 1k tokens, no step overhead, no decode share
            assertThat(core.stats().totalPrefillBusyMicros()).as(loop + " busy").isEqualTo(35_000);
            assertThat(core.stats().steps()).isEqualTo(steps);
        }
    }

    @Test
    void numTotalTokens_isTokensInUsePlusWhatAdmittedRequestsReservedButHaveNotComputed() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(1024, 1024, 256), clock);
        submit(core, "a", EngineCoreTest.ids(2000, 1), 50, 0);
        core.runOnce(); // one 1024-token chunk
        EngineStats s = core.stats();
        assertThat(s.numUsedTokens()).isEqualTo(1024);
        assertThat(s.numTotalTokens()).isEqualTo(2000 + 50); // 1024 in use + 976 prompt + 50 output reserved
        assertThat(counter(core, "num_total_tokens")).isEqualTo(2050);
        drain(core);
        assertThat(core.stats().numTotalTokens()).isEqualTo(core.stats().numUsedTokens());
    }

    @Test
    void firstSegment_isNeverPromotedByACacheHit_aContinuationIs() throws Exception {
        for (int segment : new int[] {0, 1}) {
            FakeClock c = new FakeClock();
            EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(1024, 1024, 256)
                    .withKv(1 << 20, 16).withFirstChunkGate(false), c);
            int[] shared = EngineCoreTest.ids(2000, 9);
            core.submit(new EngineRequest("warm", shared, 1, true, false, 0), new RecordingSink(c));
            drain(core);
            RecordingSink older = new RecordingSink(c);
            core.submit(new EngineRequest("older", EngineCoreTest.ids(3000, 10), 1, true, false, 0), older);
            int[] extended = java.util.Arrays.copyOf(shared, 2100);
            RecordingSink hit = new RecordingSink(c);
            core.submit(new EngineRequest("hit", extended, 1, true, false, segment), hit);
            core.runOnce();
            if (segment == 0) {
                assertThat(hit.tokens).as("the cache hit is not served first").isEmpty();
                @SuppressWarnings("unchecked")
                List<Map<String, Object>> running = (List<Map<String, Object>>) core.schedulerView().get("running");
                String firstServed = (String) running.get(0).get("request_id");
                // default FCFS: the older request's chunk goes first although "hit" needs only ~100 tokens
                assertThat(firstServed).isEqualTo("older");
                assertThat(hit.tokens).isEmpty();
                assertThat(counter(core, "inference_priority_admitted")).isZero();
            } else {
                assertThat(hit.tokens).hasSize(1); // the continuation's inference priority puts it first
                assertThat(counter(core, "inference_priority_admitted")).isEqualTo(1);
            }
        }
    }
}
