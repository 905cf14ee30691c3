package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Priority scheduling in the mock engine (vLLM {@code --scheduling-policy priority}, SGLang
 * {@code --enable-priority-scheduling}), on a fake clock: with it, a request of a lower priority value
 * is served ahead of earlier ones, both while they wait for a request slot and once admitted; without
 * it, arrival order. Running requests are never preempted.
 */
class PrioritySchedulingTest {

    private final FakeClock clock = new FakeClock();

    /** One slot: requests wait in the admission gate and enter one at a time. */
    private static EngineConfig oneSlot(boolean priority) {
        return EngineConfig.defaults().withBudgets(16384, 8192, 1).withPriorityScheduling(priority);
    }

    /** Three requests at priority 1 arrive first, then one at 0 and one at -1; returns the order of first tokens. */
    private List<String> firstTokenOrder(EngineConfig config) throws InterruptedException {
        EngineCore core = new EngineCore(config, clock);
        Map<String, RecordingSink> sinks = new LinkedHashMap<>();
        String[] ids = {"low-1", "low-2", "low-3", "mid", "high"};
        int[] priorities = {1, 1, 1, 0, -1};
        for (int i = 0; i < ids.length; i++) {
            RecordingSink sink = new RecordingSink(clock);
            core.submit(new EngineRequest(ids[i], EngineCoreTest.ids(2000, i + 1), 4, true, false, 0, priorities[i]), sink);
            sinks.put(ids[i], sink);
        }
        for (int i = 0; i < 100_000 && core.hasWork(); i++) {
            core.runOnce();
        }
        assertThat(core.hasWork()).isFalse();
        List<String> order = new ArrayList<>(sinks.keySet());
        order.sort(Comparator.comparingDouble(id -> sinks.get(id).firstTokenMillis));
        return order;
    }

    @Test
    void withPriorityScheduling_aLowerValueWaitingForASlotOvertakesEarlierRequests() throws Exception {
        // all five are submitted before the engine's first iteration, which offers them to the admission
        // gate together: the one slot goes to the lowest value first
        assertThat(firstTokenOrder(oneSlot(true))).containsExactly("high", "mid", "low-1", "low-2", "low-3");
    }

    @Test
    void withoutIt_arrivalOrder_thePriorityIgnored() throws Exception {
        assertThat(firstTokenOrder(oneSlot(false))).containsExactly("low-1", "low-2", "low-3", "mid", "high");
    }

    @Test
    void admittedRequestsAreOrderedToo_butAPromptBeingPrefilledIsNotOvertaken() throws Exception {
        // many slots, a small per-step prefill budget: every request is admitted at once and prefill is
        // chunked over several steps, so the order of first tokens is the scheduler's prefill order
        EngineConfig config = EngineConfig.defaults().withBudgets(1000, 1000, 64).withPriorityScheduling(true);
        EngineCore core = new EngineCore(config, clock);
        RecordingSink first = new RecordingSink(clock);
        core.submit(new EngineRequest("started", EngineCoreTest.ids(6000, 9), 2, true, false, 0, 5), first);
        core.runOnce(); // its first chunk runs: it is now being prefilled
        Map<String, RecordingSink> later = new LinkedHashMap<>();
        for (String id : List.of("b", "a")) {
            RecordingSink sink = new RecordingSink(clock);
            core.submit(new EngineRequest(id, EngineCoreTest.ids(1000, id.charAt(0)), 2, true, false, 0,
                    id.equals("a") ? -1 : 0), sink);
            later.put(id, sink);
        }
        for (int i = 0; i < 100_000 && core.hasWork(); i++) {
            core.runOnce();
        }
        assertThat(later.get("a").firstTokenMillis).isLessThan(later.get("b").firstTokenMillis);
        // the started request kept its place (vLLM's running queue goes first) and was not cut
        assertThat(first.firstTokenMillis).isLessThan(later.get("a").firstTokenMillis);
        assertThat(first.finishReason).isEqualTo("length");
        assertThat(first.tokens).hasSize(2);
    }
}
