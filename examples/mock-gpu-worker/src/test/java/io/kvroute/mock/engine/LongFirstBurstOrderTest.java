package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Who gets which forward pass when, under {@code default} in the {@code lightllm} loop, on the fake
 * clock: the long-first burst of LightLLM's prefill-queue measurement and of the bench's
 * {@code long-first-burst} scenario (48 x 16384 tokens at 0-47 ms, 48 x 128 at 60-107 ms),
 * batch-max-tokens = chunked-prefill-size = 1024, {@code h100-small}. Pins the loop's facts: one
 * forward pass per step, prefill first while any chunk fits (decode waits), every prefill pass a
 * full 1024-token chunk, strict FCFS without rotation, and the router's first-chunk gate keeping at
 * most two first chunks' worth of prefill inside the engine.
 */
class LongFirstBurstOrderTest {

    private static final int LONGS = 48;
    private static final int SHORTS = 48;
    private static final int LONG_TOKENS = 16_384;
    private static final int SHORT_TOKENS = 128;
    private static final int BUDGET = 1024;

    /** Per-request trace of one replay. */
    private static final class Trace {
        final List<RecordingSink> sinks = new ArrayList<>();
        final Map<String, Integer> firstChunkStep = new HashMap<>();
        final List<Long> prefillTokensPerStep = new ArrayList<>();
        final List<Boolean> decodedInStep = new ArrayList<>();
        /** Long prompts inside the engine that still have prompt to compute, per step. */
        final List<Integer> prefillingInEngine = new ArrayList<>();

        int firstChunkStep(int i) {
            return firstChunkStep.get("r" + i);
        }

        double firstTokenMillis(int i) {
            return sinks.get(i).firstTokenMillis;
        }
    }

    private static Trace replay() throws InterruptedException {
        return replay(true);
    }

    private static Trace replay(boolean gate) throws InterruptedException {
        FakeClock clock = new FakeClock();
        EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(BUDGET, BUDGET, 256)
                .withTimeModel(TimeModel.h100Small()).withFirstChunkGate(gate), clock);
        Trace t = new Trace();
        int total = LONGS + SHORTS;
        int next = 0;
        long prevProcessed = 0;
        Map<String, Integer> prevOutput = new HashMap<>();
        while (next < total || core.hasWork()) {
            while (next < total && arrivalMillis(next) <= clock.millis()) {
                RecordingSink s = new RecordingSink(clock);
                core.submit(new EngineRequest("r" + next, EngineCoreTest.ids(next < LONGS ? LONG_TOKENS : SHORT_TOKENS,
                        next + 1), 128, true, false, 0), s);
                t.sinks.add(s);
                next++;
            }
            if (!core.runOnce()) {
                clock.advanceMillis(1); // idle until the next arrival
                continue;
            }
            int step = t.prefillTokensPerStep.size() + 1;
            long processed = core.stats().processedPrefillTokens();
            t.prefillTokensPerStep.add(processed - prevProcessed);
            prevProcessed = processed;
            boolean decoded = false;
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> running = (List<Map<String, Object>>) core.schedulerView().get("running");
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> waiting = (List<Map<String, Object>>) core.schedulerView().get("waiting");
            int prefilling = 0;
            for (Map<String, Object> r : running) {
                if ((Integer) r.get("input_len") == LONG_TOKENS && (Integer) r.get("kv_len") + 1 < LONG_TOKENS) {
                    prefilling++;
                }
            }
            for (Map<String, Object> r : waiting) {
                prefilling += (Integer) r.get("input_len") == LONG_TOKENS ? 1 : 0;
            }
            t.prefillingInEngine.add(prefilling);
            for (Map<String, Object> r : running) {
                String id = (String) r.get("request_id");
                t.firstChunkStep.putIfAbsent(id, step);
                int out = (Integer) r.get("output_len");
                decoded |= out > 1 && out > prevOutput.getOrDefault(id, 0);
                prevOutput.put(id, out);
            }
            t.decodedInStep.add(decoded);
        }
        return t;
    }

    private static double arrivalMillis(int i) {
        return i < LONGS ? i : 60 + (i - LONGS);
    }

    @Test
    void lightllm_everyStepIsOnePass_prefillFirst_andEveryPrefillPassIsAFullChunk() throws Exception {
        Trace t = replay();
        long promptTokens = (long) LONGS * LONG_TOKENS + (long) SHORTS * SHORT_TOKENS;
        long prefillSteps = t.prefillTokensPerStep.stream().filter(n -> n > 0).count();
        assertThat(t.prefillTokensPerStep.stream().filter(n -> n > 0)).allMatch(n -> n == BUDGET);
        assertThat(prefillSteps).isEqualTo(promptTokens / BUDGET);
        for (int s = 0; s < t.prefillTokensPerStep.size(); s++) {
            assertThat(t.decodedInStep.get(s) && t.prefillTokensPerStep.get(s) > 0)
                    .as("step %d both decoded and prefilled", s + 1).isFalse();
        }
        // Decode waits while any prefill is runnable: no request gets its second token before the
        // last prompt's first token (all prefill is done by then).
        double lastFirstToken = t.sinks.stream().mapToDouble(x -> x.firstTokenMillis).max().orElseThrow();
        assertThat(t.sinks).allMatch(x -> x.tokenMillis.get(1) > lastFirstToken);
    }

    @Test
    void lightllm_gateKeepsAtMostTwoFirstChunksOfPrefillInTheEngine_withoutItAllAreThere() throws Exception {
        Trace gated = replay(true);
        // limit 2 x 1024 first-chunk tokens: at most two long prompts inside the engine at once
        assertThat(gated.prefillingInEngine).allMatch(n -> n <= 2);
        Trace open = replay(false);
        assertThat(open.prefillingInEngine.stream().mapToInt(Integer::intValue).max().orElseThrow())
                .isEqualTo(LONGS);
    }

    @Test
    void default_noRotation_longsCompleteTheirPromptsOneAfterAnotherInArrivalOrder() throws Exception {
        Trace t = replay();
        double chunkStepMillis = TimeModel.h100Small().stepMillis(BUDGET, false);
        for (int i = 1; i < LONGS; i++) {
            // strict FCFS: each long's 16 chunks run back to back after the previous long's
            double gap = t.firstTokenMillis(i) - t.firstTokenMillis(i - 1);
            assertThat(gap).isCloseTo(16 * chunkStepMillis, org.assertj.core.data.Offset.offset(0.5));
        }
        for (int i = LONGS; i < LONGS + SHORTS; i++) {
            assertThat(t.firstTokenMillis(i)).isGreaterThan(t.firstTokenMillis(LONGS - 1));
        }
    }
}
