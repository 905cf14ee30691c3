package io.kvroute.router.lora;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The cases of llm-d's lora-affinity-scorer, in its order. */
class AdapterAffinityTest {

    private static AdapterView view(WorkerAdapters w, List<String> recent) {
        return new AdapterView(Map.of("w", w), Map.of(), Map.of("w", recent));
    }

    private static WorkerAdapters vllm(Set<String> running, Set<String> waiting, int maxLoras) {
        return new WorkerAdapters(Set.of(), running, waiting, maxLoras, -1);
    }

    @Test
    void running_scoresOne() {
        assertThat(AdapterAffinity.score(view(vllm(Set.of("a", "b"), Set.of(), 2), List.of()), "w", "a")).isEqualTo(1.0);
    }

    @Test
    void sentHereLastByThisRouter_scoresOneThoughNotRunningNow() {
        assertThat(AdapterAffinity.score(view(vllm(Set.of(), Set.of(), 2), List.of("x", "a")), "w", "a")).isEqualTo(1.0);
    }

    @Test
    void room_scoresPointEight_evenWhenTheAdapterWaits() {
        // running + waiting adapters (b, a) < 3 slots: room, and room is checked before waiting, as in llm-d
        assertThat(AdapterAffinity.score(view(vllm(Set.of("b"), Set.of("a"), 3), List.of()), "w", "a")).isEqualTo(0.8);
    }

    @Test
    void idleAdaptersTheRouterSentThere_fillSlotsToo() {
        // nothing runs, but the router sent x and y there last: both slots are taken by idle adapters
        assertThat(AdapterAffinity.score(view(vllm(Set.of(), Set.of(), 2), List.of("x", "y")), "w", "a")).isZero();
        assertThat(AdapterAffinity.score(view(vllm(Set.of(), Set.of(), 3), List.of("x", "y")), "w", "a")).isEqualTo(0.8);
    }

    @Test
    void waitingWithoutRoom_scoresPointSix() {
        assertThat(AdapterAffinity.score(view(vllm(Set.of("b"), Set.of("a"), 2), List.of()), "w", "a")).isEqualTo(0.6);
    }

    @Test
    void fullOrUnknown_scoresZero() {
        assertThat(AdapterAffinity.score(view(vllm(Set.of("b", "c"), Set.of(), 2), List.of()), "w", "a")).isZero();
        assertThat(AdapterAffinity.score(AdapterView.EMPTY, "w", "a")).isZero();
    }

    @Test
    void sglangSlots_decideRoom() {
        WorkerAdapters free = new WorkerAdapters(Set.of(), Set.of(), Set.of(), 4, 3);
        WorkerAdapters full = new WorkerAdapters(Set.of(), Set.of(), Set.of(), 4, 4);
        assertThat(AdapterAffinity.score(view(free, List.of()), "w", "a")).isEqualTo(0.8);
        assertThat(AdapterAffinity.score(view(full, List.of()), "w", "a")).isZero();
    }

    @Test
    void outcomeLabels() {
        assertThat(AdapterAffinity.outcome(1.0)).isEqualTo("resident");
        assertThat(AdapterAffinity.outcome(0.8)).isEqualTo("loaded");
        assertThat(AdapterAffinity.outcome(0.6)).isEqualTo("waiting");
        assertThat(AdapterAffinity.outcome(0.0)).isEqualTo("miss");
    }
}
