package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EngineCoreTest {

    private final FakeClock clock = new FakeClock();

    static int[] ids(int len, int seed) {
        int[] a = new int[len];
        for (int i = 0; i < len; i++) {
            a[i] = seed * 100_000 + i;
        }
        return a;
    }

    static EngineRequest req(String id, int[] ids, int maxNew) {
        return new EngineRequest(id, ids, maxNew, true, false, 0);
    }

    private RecordingSink submit(EngineCore core, EngineRequest r) {
        RecordingSink sink = new RecordingSink(clock);
        core.submit(r, sink);
        return sink;
    }

    private static void runUntilIdle(EngineCore core) throws InterruptedException {
        for (int i = 0; i < 1_000_000 && core.hasWork(); i++) {
            core.runOnce();
        }
        assertThat(core.hasWork()).as("engine drained").isFalse();
    }

    @Test
    void request_getsPrefillDoneThenExactlyMaxNewTokensThenLengthFinish() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults(), clock);
        RecordingSink s = submit(core, req("a", ids(100, 1), 5));
        runUntilIdle(core);
        assertThat(s.events).containsExactly("prefillDone", "firstToken", "finish");
        assertThat(s.tokens).hasSize(5);
        assertThat(s.finishReason).isEqualTo("length");
        assertThat(s.usage).isEqualTo(new TokenSink.Usage(100, 5, 0));
        // 1 prefill step (first token) + 4 decode steps, on the fast model
        TimeModel tm = TimeModel.fast();
        double expectedMillis = tm.stepMillis(100, false) + 4 * tm.stepMillis(0, true);
        assertThat(clock.millis()).isCloseTo(expectedMillis, org.assertj.core.data.Offset.offset(0.01));
        assertThat(s.firstTokenMillis).isCloseTo(tm.stepMillis(100, false), org.assertj.core.data.Offset.offset(0.01));
        assertThat(core.stats().processedPrefillTokens()).isEqualTo(100);
        assertThat(core.stats().steps()).isEqualTo(5);
    }

    @Test
    void secondRequest_hitsPageAlignedPrefixCache() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults().withKv(1 << 20, 16), clock);
        int[] first = ids(100, 7);
        runUntilIdleAfter(core, req("a", first, 2));
        int[] second = java.util.Arrays.copyOf(first, 150);
        for (int i = 100; i < 150; i++) {
            second[i] = -i;
        }
        RecordingSink s = submit(core, req("b", second, 2));
        runUntilIdle(core);
        assertThat(s.cachedTokens).isEqualTo(96); // 100 shared tokens, 6 whole pages of 16
        assertThat(s.usage.cachedTokens()).isEqualTo(96);
        // Fully cached prompt still computes its last token (and the cap keeps it page-aligned).
        RecordingSink again = submit(core, req("c", first, 1));
        runUntilIdle(core);
        assertThat(again.cachedTokens).isEqualTo(96);
    }

    private void runUntilIdleAfter(EngineCore core, EngineRequest r) throws InterruptedException {
        submit(core, r);
        runUntilIdle(core);
    }

    @Test
    void requestWithoutSlot_getsServerBusy429BeforeAnyOutputAfterWaitTimeout() throws Exception {
        EngineConfig cfg = EngineConfig.defaults().withBudgets(16384, 8192, 1).withAdmission(true, 2.0)
                .withTimeModel(new TimeModel(0, 100, 0, 1)); // each decode step takes 100 ms
        EngineCore core = new EngineCore(cfg, clock);
        RecordingSink holder = submit(core, req("holder", ids(10, 1), 50)); // ~5 s of decoding
        RecordingSink late = submit(core, req("late", ids(10, 2), 5));
        runUntilIdle(core);
        assertThat(late.events).containsExactly("error");
        assertThat(late.errorStatus).isEqualTo(429);
        assertThat(late.errorType).isEqualTo("server_busy");
        assertThat(late.tokens).isEmpty();
        // rejected at the first step boundary at or after the 2 s wait (steps are 100 ms)
        assertThat(late.errorMillis).isBetween(2000.0, 2100.0);
        assertThat(holder.tokens).hasSize(50);
    }

    @Test
    void throwingSink_doesNotStopTheEngine() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults(), clock);
        core.submit(req("bad", ids(10, 1), 3), new TokenSink() {
            @Override
            public void onToken(int tokenId) {
                throw new IllegalStateException("client gone");
            }

            @Override
            public void onFinish(String finishReason, Usage usage) {}

            @Override
            public void onError(int httpStatus, String errorType, String message) {}
        });
        RecordingSink good = submit(core, req("good", ids(10, 2), 3));
        runUntilIdle(core);
        assertThat(good.tokens).hasSize(3);
        assertThatThrownBy(() -> core.submit(req("empty", new int[0], 1), good))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void disabledSelfRequestLimit_queuesInsteadOfAnsweringBusy() throws Exception {
        EngineConfig cfg = EngineConfig.defaults().withBudgets(16384, 8192, 1).withAdmission(false, 2.0)
                .withTimeModel(new TimeModel(0, 100, 0, 1));
        EngineCore core = new EngineCore(cfg, clock);
        submit(core, req("holder", ids(10, 1), 50));
        RecordingSink late = submit(core, req("late", ids(10, 2), 5));
        runUntilIdle(core);
        assertThat(late.finishReason).isEqualTo("length");
        assertThat(late.tokens).hasSize(5);
    }

    @Test
    void abort_endsRequestWithAbortAndFreesItsResources() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults(), clock);
        RecordingSink s = new RecordingSink(clock);
        Engine.Submission h = core.submit(req("a", ids(64, 3), 1000), s);
        core.runOnce();
        core.runOnce();
        h.abort();
        h.abort();
        runUntilIdle(core);
        assertThat(s.finishReason).isEqualTo("abort");
        assertThat(s.events).containsExactly("prefillDone", "firstToken", "finish");
        assertThat(core.stats().numUsedTokens()).isZero();
        assertThat(core.stats().numRunningReqs()).isZero();
    }

    @Test
    void abortedPrefillTokens_countThePromptWorkOfRequestsAbortedBeforeTheirEnd() throws Exception {
        // chunks of 1,000 tokens per step; one slot, so the second request waits for admission
        EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(1000, 1000, 1), clock);
        Engine.Submission running = core.submit(req("long", ids(5000, 4), 4), new RecordingSink(clock));
        Engine.Submission pending = core.submit(req("pending", ids(800, 5), 4), new RecordingSink(clock));
        core.runOnce();
        core.runOnce(); // two chunks of the long prompt computed
        running.abort();
        pending.abort();
        runUntilIdle(core);
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> counters = (java.util.Map<String, Object>) core.schedulerView().get("counters");
        assertThat(counters.get("aborted_prefill_tokens")).as("the long prompt's two chunks; nothing for the pending one")
                .isEqualTo(2000L);
        Engine.Submission finished = core.submit(req("done", ids(300, 6), 2), new RecordingSink(clock));
        runUntilIdle(core);
        finished.abort(); // after its end: nothing thrown away
        runUntilIdle(core);
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> after = (java.util.Map<String, Object>) core.schedulerView().get("counters");
        assertThat(after.get("aborted_prefill_tokens")).isEqualTo(2000L);
    }

    @Test
    void stepListener_andSchedulerView_reportQueuesAndCounters() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(2048, 1024, 256), clock);
        List<EngineStats> seen = new ArrayList<>();
        core.addStepListener(seen::add);
        submit(core, req("long", ids(4096, 1), 3));
        core.submit(new EngineRequest("cont", ids(64, 2), 3, true, false, 2), new RecordingSink(clock));
        core.runOnce();
        @SuppressWarnings("unchecked")
        List<java.util.Map<String, Object>> running = (List<java.util.Map<String, Object>>) core.schedulerView().get("running");
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> counters = (java.util.Map<String, Object>) core.schedulerView().get("counters");
        // the continuation (infer priority -1, admission high priority) went first
        assertThat(running).extracting(m -> m.get("request_id")).containsExactly("cont", "long");
        assertThat(running.get(0)).containsEntry("infer_high_priority", -1).containsEntry("segment_index", 2)
                .containsEntry("high_priority_request", true);
        assertThat(counters).containsEntry("processed_prefill_tokens", 64L + 1024L);
        assertThat(seen).hasSize(1);
        assertThat(seen.get(0).steps()).isEqualTo(1);
        assertThat(seen.get(0).numRunningReqs()).isEqualTo(2);
        runUntilIdle(core);
        assertThat(seen.get(seen.size() - 1).processedPrefillTokens()).isEqualTo(4096 + 64);
        assertThat(core.info()).isEqualTo(new EngineInfo(1 << 20, 256, 16, "default", "lightllm"));
    }

    /**
     * LightLLM's prefill-queue "long requests first" shape, scaled to 16 + 16: long prompts (16384) arrive first,
     * short ones (128) 60 ms later; batch-max-tokens = chunked-prefill-size = 1024, H100 preset.
     */
    @Test
    void promoteShortestAndHrrn_cutShortMedianTtftBelowHalfOfDefault_longFirstBurst() throws Exception {
        double defaultMedian = shortMedianTtftMillis("default");
        double promote = shortMedianTtftMillis("promote_shortest");
        double hrrn = shortMedianTtftMillis("hrrn");
        System.out.printf("long-first 16+16: short TTFT median default=%.0f ms promote_shortest=%.0f ms hrrn=%.0f ms%n",
                defaultMedian, promote, hrrn);
        assertThat(promote).isLessThan(defaultMedian / 2);
        assertThat(hrrn).isLessThan(defaultMedian / 2);
    }

    private double shortMedianTtftMillis(String strategy) throws InterruptedException {
        FakeClock c = new FakeClock();
        // Gate off: the engine sees every queued request (with LightLLM's gate it holds about one long
        // prompt at a time and no strategy reaches the shorts; LongFirstBurstReplayTest pins both).
        EngineConfig cfg = EngineConfig.defaults().withStrategy(strategy).withBudgets(1024, 1024, 256)
                .withTimeModel(TimeModel.h100Small()).withFirstChunkGate(false);
        EngineCore core = new EngineCore(cfg, c);
        List<RecordingSink> longs = new ArrayList<>();
        List<RecordingSink> shorts = new ArrayList<>();
        AtomicInteger seed = new AtomicInteger();
        for (int i = 0; i < 16; i++) {
            RecordingSink s = new RecordingSink(c);
            core.submit(req("long-" + i, ids(16384, seed.incrementAndGet()), 128), s);
            longs.add(s);
        }
        while (c.millis() < 60) {
            core.runOnce();
        }
        double shortsArriveMillis = c.millis();
        for (int i = 0; i < 16; i++) {
            RecordingSink s = new RecordingSink(c);
            core.submit(req("short-" + i, ids(128, seed.incrementAndGet()), 128), s);
            shorts.add(s);
        }
        while (core.hasWork()) {
            core.runOnce();
        }
        assertThat(longs).allMatch(s -> s.tokens.size() == 128);
        assertThat(shorts).allMatch(s -> s.tokens.size() == 128);
        double[] ttft = shorts.stream().mapToDouble(s -> s.firstTokenMillis - shortsArriveMillis).sorted().toArray();
        return (ttft[7] + ttft[8]) / 2;
    }

    @Test
    void backToBackSteps_absorbTheHostWorkBetweenThemIntoTheModelledStepTime() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults(), clock);
        long hostWorkNanos = 300_000; // 0.3 ms of host work after each step: emitting, publishing, composing the next
        core.addStepListener(stats -> clock.advanceNanos(hostWorkNanos));
        RecordingSink s = submit(core, req("a", ids(100, 1), 20));
        runUntilIdle(core);
        assertThat(s.tokens).hasSize(20);
        TimeModel tm = TimeModel.fast();
        double modelMillis = tm.stepMillis(100, false) + 19 * tm.stepMillis(0, true);
        // the last step's host work follows it; every earlier one is absorbed by the next step's sleep
        assertThat(clock.millis()).isCloseTo(modelMillis + hostWorkNanos / 1e6, org.assertj.core.data.Offset.offset(0.01));
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> counters = (java.util.Map<String, Object>) core.schedulerView().get("counters");
        assertThat((long) counters.get("step_wall_micros")).isEqualTo((long) counters.get("step_model_micros"));
    }

    @Test
    void lateness_isCarriedAtMostOneStep_andAnIdleEngineStartsAfresh() throws Exception {
        EngineCore core = new EngineCore(EngineConfig.defaults(), clock);
        TimeModel tm = TimeModel.fast();
        long decodeNanos = (long) (tm.stepMillis(0, true) * 1e6);
        long[] stallNanos = {0};
        core.addStepListener(stats -> clock.advanceNanos(stallNanos[0]));
        RecordingSink s = submit(core, req("a", ids(100, 1), 4));
        core.runOnce(); // prefill step, emits the first token
        stallNanos[0] = 3 * decodeNanos; // a stall of three steps after each step (a GC pause, a descheduled thread)
        long before = clock.nanoTime();
        core.runOnce(); // a decode step: the prefill step's 0 ns of host work carried; it sleeps in full
        core.runOnce(); // the stall after the last step is 3 steps long: one is carried, so no sleep
        long took = clock.nanoTime() - before;
        assertThat(took).isEqualTo(decodeNanos + 3 * decodeNanos + 0 + 3 * decodeNanos);
        runUntilIdle(core);
        assertThat(s.tokens).hasSize(4);
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> counters = (java.util.Map<String, Object>) core.schedulerView().get("counters");
        assertThat((long) counters.get("step_wall_micros")).as("the stalls the pacing could not absorb")
                .isGreaterThan((long) counters.get("step_model_micros"));
        // idle, then a new request: its first step is not shortened by the old lateness
        stallNanos[0] = 0;
        core.runOnce();
        clock.advanceMillis(1_000);
        RecordingSink t = submit(core, req("b", ids(100, 2), 1));
        long start = clock.nanoTime();
        runUntilIdle(core);
        assertThat(t.tokens).hasSize(1);
        assertThat(clock.nanoTime() - start).isEqualTo((long) (tm.stepMillis(100, false) * 1e6));
    }
}
