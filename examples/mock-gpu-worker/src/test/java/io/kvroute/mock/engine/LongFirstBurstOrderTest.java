package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Who gets prefill when under {@code default}, on the fake clock: seed 002's long-first burst (48 x
 * 16384 tokens at 0-47 ms, 48 x 128 at 60-107 ms), batch-max-tokens = chunked-prefill-size = 1024,
 * {@code h100-small}. Pins down the engine-loop facts behind a bench report that "a full 1024-token
 * chunk is skipped once decodes share the budget": it is not (decode runs as its own pass, as in
 * LightLLM's budget loop, where only prefill tokens count against batch_max_tokens); what the
 * reporter saw is the documented round-robin of partially prefilled prompts.
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

        int firstChunkStep(int i) {
            return firstChunkStep.get("r" + i);
        }

        double firstTokenMillis(int i) {
            return sinks.get(i).firstTokenMillis;
        }
    }

    private static Trace replay() throws InterruptedException {
        FakeClock clock = new FakeClock();
        EngineCore core = new EngineCore(EngineConfig.defaults().withBudgets(BUDGET, BUDGET, 256)
                .withTimeModel(TimeModel.h100Small()), clock);
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
    void default_decodesNeverCrowdOutAFullChunk_everyPrefillStepIsFull() throws Exception {
        Trace t = replay();
        long promptTokens = (long) LONGS * LONG_TOKENS + (long) SHORTS * SHORT_TOKENS;
        long prefillSteps = t.prefillTokensPerStep.stream().filter(n -> n > 0).count();
        // 48 x 16 long chunks + 6 steps of 8 shorts: not one step under-filled, although decodes ran in most.
        assertThat(prefillSteps).isEqualTo(promptTokens / BUDGET);
        assertThat(t.prefillTokensPerStep.stream().filter(n -> n > 0)).allMatch(n -> n == BUDGET);
        long fullStepsBesideDecodes = 0;
        for (int s = 0; s < t.prefillTokensPerStep.size(); s++) {
            if (t.decodedInStep.get(s) && t.prefillTokensPerStep.get(s) == BUDGET) {
                fullStepsBesideDecodes++;
            }
        }
        assertThat(fullStepsBesideDecodes).as("full 1024-token chunks in steps that also decoded").isGreaterThan(100); // the shorts' 127 decode steps overlap long prefill
    }

    @Test
    void default_shortsWaitOneRoundRobinTurnOfTheQueuedLongs_notTheirWholePrompts() throws Exception {
        Trace t = replay();
        int lastLongFirstChunk = 0;
        double firstLongFirstToken = Double.MAX_VALUE;
        for (int i = 0; i < LONGS; i++) {
            lastLongFirstChunk = Math.max(lastLongFirstChunk, t.firstChunkStep(i));
            firstLongFirstToken = Math.min(firstLongFirstToken, t.firstTokenMillis(i));
        }
        for (int i = LONGS; i < LONGS + SHORTS; i++) {
            // every queued long got exactly its turn before any short (FCFS admission order) ...
            assertThat(t.firstChunkStep(i)).isGreaterThan(lastLongFirstChunk);
            // ... and the shorts are then not held behind the longs' remaining 15 chunks each
            assertThat(t.firstTokenMillis(i)).isLessThan(firstLongFirstToken);
            assertThat(t.firstChunkStep(i)).isLessThanOrEqualTo(lastLongFirstChunk + SHORTS * SHORT_TOKENS / BUDGET + 2);
        }
    }

    @Test
    void default_partiallyPrefilledLongsRotate_soTheyAllCompleteTheirPromptsNearTheEnd() throws Exception {
        Trace t = replay();
        // Round-robin: the longs complete in admission order within about one rotation rather than
        // one after another (strict FCFS would spread them from ~0.4 s to ~20 s). r0 ran alone for
        // two steps before the others arrived, so it finishes a turn early.
        for (int i = 2; i < LONGS; i++) {
            assertThat(t.firstTokenMillis(i)).isGreaterThan(t.firstTokenMillis(i - 1));
        }
        double stepMillis = TimeModel.h100Small().stepMillis(BUDGET, true);
        double spread = t.firstTokenMillis(LONGS - 1) - t.firstTokenMillis(1);
        assertThat(spread).isLessThan(1.5 * LONGS * stepMillis);
        double lastPromptDone = t.firstTokenMillis(LONGS - 1);
        assertThat(t.firstTokenMillis(0)).isGreaterThan(lastPromptDone / 2);
    }
}
