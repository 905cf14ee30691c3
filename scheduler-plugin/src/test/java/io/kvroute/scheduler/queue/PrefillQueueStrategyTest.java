package io.kvroute.scheduler.queue;

import static io.kvroute.scheduler.queue.Reqs.continuation;
import static io.kvroute.scheduler.queue.Reqs.decode;
import static io.kvroute.scheduler.queue.Reqs.ids;
import static io.kvroute.scheduler.queue.Reqs.prefill;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Mirrors in spirit LightLLM's {@code test_prefill_queue_strategy.py}, the unit test of
 * {@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/}.
 */
class PrefillQueueStrategyTest {

    @ParameterizedTest
    @ValueSource(strings = {"default", "promote_shortest", "hrrn"})
    void everyStrategy_handlesEmptyAndSingleInput(String name) {
        PrefillQueueStrategy s = PrefillQueueStrategy.forName(name);
        assertThat(s.reorder(List.of(), 0)).isEmpty();
        SchedRequest only = prefill("a", 10);
        assertThat(s.reorder(List.of(only), 5)).containsExactly(only);
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "promote_shortest", "hrrn"})
    void everyStrategy_leavesInputListAndRequestProgressUntouched(String name) {
        List<SchedRequest> input = new ArrayList<>(List.of(prefill("a", 500), decode("d", 4),
                prefill("b", 3, 0, 0), continuation("c", 50), prefill("e", 20, 8, 0)));
        List<SchedRequest> before = List.copyOf(input);
        List<String> statesBefore = input.stream().map(SchedRequest::toString).toList();
        List<SchedRequest> out = PrefillQueueStrategy.forName(name).reorder(input, 1000);
        assertThat(input).containsExactlyElementsOf(before);
        assertThat(input.stream().map(SchedRequest::toString).toList()).isEqualTo(statesBefore);
        assertThat(out).isNotSameAs(input).containsExactlyInAnyOrderElementsOf(before);
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "promote_shortest", "hrrn"})
    void everyStrategy_keepsDecodeRequestsFirstInOriginalOrder(String name) {
        // p1 has two prompt tokens: with one it would be a decode request (LightLLM's cur_kv_len + 1 == total_len)
        List<SchedRequest> input = List.of(prefill("p1", 2), decode("d2", 90), continuation("c", 7),
                decode("d1", 5), prefill("p2", 1000), decode("d3", 40));
        List<SchedRequest> out = PrefillQueueStrategy.forName(name).reorder(input, 10_000);
        assertThat(ids(out).subList(0, 3)).containsExactly("d2", "d1", "d3");
    }

    @Test
    void default_stableSortsByInferPriorityAndKeepsFcfsOtherwise() {
        List<SchedRequest> input = List.of(prefill("n1", 9000), continuation("c1", 10), prefill("n2", 5),
                continuation("c2", 3));
        assertThat(ids(PrefillQueueStrategy.forName("default").reorder(input, 0)))
                .containsExactly("c1", "c2", "n1", "n2");
    }

    @Test
    void promoteShortest_movesOnlyTheShortestNormalRequestToHeadOfNormalGroup() {
        List<SchedRequest> input = List.of(prefill("long1", 16384), prefill("long2", 16384),
                prefill("short1", 128), continuation("cont", 4000), prefill("mid", 512), prefill("short2", 128));
        assertThat(ids(PrefillQueueStrategy.forName("promote_shortest").reorder(input, 0)))
                .containsExactly("cont", "short1", "long1", "long2", "mid", "short2");
    }

    @Test
    void promoteShortest_earliestWinsATieOnRemainingUncachedTokens() {
        // b and c both have 100 uncached tokens left (c through a cache hit); b came first.
        List<SchedRequest> input = List.of(prefill("a", 300), prefill("b", 100), prefill("c", 164, 64, 0));
        assertThat(ids(PrefillQueueStrategy.forName("promote_shortest").reorder(input, 0)))
                .containsExactly("b", "a", "c");
    }

    @Test
    void promoteShortest_measuresRemainingPromptNotInputLength() {
        SchedRequest halfDone = prefill("half", 4096);
        halfDone.advancePrefill(4000); // 96 left
        List<SchedRequest> input = List.of(prefill("s", 128), halfDone);
        assertThat(ids(PrefillQueueStrategy.forName("promote_shortest").reorder(input, 0)))
                .containsExactly("half", "s");
    }

    @Test
    void hrrn_favoursShortWorkAtEqualAge() {
        List<SchedRequest> input = List.of(prefill("long", 16384, 0, 0), prefill("short", 128, 0, 0),
                prefill("mid", 1024, 0, 0));
        assertThat(ids(PrefillQueueStrategy.forName("hrrn").reorder(input, 2048)))
                .containsExactly("short", "mid", "long");
    }

    @Test
    void hrrn_agingLetsOldLongRequestOvertakeNewShortOne() {
        // long arrived at counter 0 (ratio 100000/16384 ~ 6.1); short arrived at 99900 (100/128 ~ 0.8).
        List<SchedRequest> input = List.of(prefill("short-new", 128, 0, 99_900), prefill("long-old", 16384, 0, 0));
        assertThat(ids(PrefillQueueStrategy.forName("hrrn").reorder(input, 100_000)))
                .containsExactly("long-old", "short-new");
        // Control: a long request that arrived only shortly before the short one does not overtake it.
        List<SchedRequest> young = List.of(prefill("long-young", 16384, 0, 99_800), prefill("short-new2", 128, 0, 99_900));
        assertThat(ids(PrefillQueueStrategy.forName("hrrn").reorder(young, 100_000)))
                .containsExactly("short-new2", "long-young");
    }

    @Test
    void hrrn_bindsDenominatorOnceAndBreaksTiesByArrivalSequence() {
        PrefillQueueStrategy hrrn = PrefillQueueStrategy.forName("hrrn");
        SchedRequest fresh = prefill("z-fresh", 1000, 0, 500); // built first: the smaller arrival sequence
        SchedRequest chunked = prefill("b", 2000, 0, 0); // bound uncached = 2000
        hrrn.reorder(List.of(chunked), 0);
        chunked.advancePrefill(1000); // 1000 left, but the bound cost stays 2000
        // chunked: 1000/2000 = 0.5; fresh (first ordering now): (1000-500)/1000 = 0.5 -> tie, broken by the
        // arrival sequence (fresh is earlier), not by the id string ("b" < "z-fresh") nor by list position.
        assertThat(ids(hrrn.reorder(List.of(chunked, fresh), 1000))).containsExactly("z-fresh", "b");
        // Had the denominator shrunk to 1000, "b" would score 1.0 and lead.
        assertThat(chunked.hrrnUncachedTokens()).isEqualTo(2000);
    }

    @Test
    void hrrn_keepsNegativePriorityFirstInQueueOrder() {
        List<SchedRequest> input = List.of(prefill("n", 10, 0, 0), continuation("c2", 9000), continuation("c1", 5));
        assertThat(ids(PrefillQueueStrategy.forName("hrrn").reorder(input, 1_000_000)))
                .containsExactly("c2", "c1", "n");
    }

    @Test
    void forName_rejectsUnknownStrategyListingTheChoices() {
        assertThatThrownBy(() -> PrefillQueueStrategy.forName("sjf"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prefill-queue-strategy")
                .hasMessageContaining("'sjf'")
                .hasMessageContaining("default, promote_shortest, hrrn");
        assertThat(PrefillQueueStrategy.forName(null).name()).isEqualTo("default");
        assertThat(PrefillQueueStrategy.forName(" HRRN ").name()).isEqualTo("hrrn");
    }
}
