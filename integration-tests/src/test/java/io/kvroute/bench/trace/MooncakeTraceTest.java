package io.kvroute.bench.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Trace parsing, hash ids to tokens, trace copies and the infinite-cache bound. */
class MooncakeTraceTest {

    private static List<TraceRequest> parse(String jsonl) throws Exception {
        return MooncakeTrace.read(new ByteArrayInputStream(jsonl.getBytes(StandardCharsets.UTF_8)), 0);
    }

    @Test
    void prompt_sharesExactlyTheBlocksItsHashIdsShare_andCutsTheLastBlock() {
        TraceRequest a = new TraceRequest(0, 1200, 10, new long[] {0, 1, 2});
        TraceRequest b = new TraceRequest(0, 1100, 10, new long[] {0, 1, 7});
        int[] pa = BlockTokens.prompt(a);
        int[] pb = BlockTokens.prompt(b);
        assertThat(pa).hasSize(1200);
        assertThat(pb).hasSize(1100);
        assertThat(Arrays.copyOf(pa, 1024)).isEqualTo(Arrays.copyOf(pb, 1024));
        assertThat(Arrays.copyOfRange(pa, 1024, 1100)).isNotEqualTo(Arrays.copyOfRange(pb, 1024, 1100));
        assertThat(BlockTokens.prompt(a)).as("same ids, same tokens").isEqualTo(pa);
        assertThat(Arrays.stream(pa).allMatch(t -> t >= BlockTokens.MIN_TOKEN_ID && t < BlockTokens.MAX_TOKEN_ID_EXCLUSIVE))
                .as("ids inside the tokenizer's regular vocabulary").isTrue();
    }

    @Test
    void bound_countsBlocksSeenBefore_byCountAndByTokens() throws Exception {
        List<TraceRequest> trace = parse("""
                {"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1, 2]}
                {"timestamp": 3, "input_length": 700, "output_length": 5, "hash_ids": [0, 3]}
                """);
        MooncakeTrace.Bound bound = MooncakeTrace.infiniteCacheBound(trace);
        assertThat(bound.blocks()).isEqualTo(5);
        assertThat(bound.reusedBlocks()).isEqualTo(1);
        assertThat(bound.tokens()).isEqualTo(1800);
        assertThat(bound.reusedTokens()).isEqualTo(512);
    }

    @Test
    void replicate_multipliesTheRateAndSharesNoBlockAcrossCopies() throws Exception {
        List<TraceRequest> trace = parse("""
                {"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1, 2]}
                {"timestamp": 3, "input_length": 700, "output_length": 5, "hash_ids": [0, 3]}
                """);
        List<TraceRequest> three = MooncakeTrace.replicate(trace, 3);
        assertThat(three).hasSize(6);
        assertThat(three).extracting(TraceRequest::timestampMs).containsExactly(0L, 0L, 0L, 3L, 3L, 3L);
        MooncakeTrace.Bound bound = MooncakeTrace.infiniteCacheBound(three);
        assertThat(bound.reusedBlocks()).as("each copy reuses only its own block 0").isEqualTo(3);
    }

    /**
     * The copies are built on demand from the base lines; they must be the requests an eager
     * expansion gives: every copy listed with its ids shifted, then stably sorted by timestamp.
     */
    @Test
    void replicate_givesTheRequestsOfAnEagerExpansion_tiesAndUnsortedLinesIncluded() throws Exception {
        List<TraceRequest> trace = parse("""
                {"timestamp": 5, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1, 2]}
                {"timestamp": 3, "input_length": 700, "output_length": 6, "hash_ids": [0, 3]}
                {"timestamp": 5, "input_length": 600, "output_length": 7, "hash_ids": [4, 9]}
                {"timestamp": 8, "input_length": 300, "output_length": 8, "hash_ids": [0]}
                """);
        for (int copies : new int[] {1, 2, 5}) {
            List<TraceRequest> lazy = MooncakeTrace.replicate(trace, copies);
            List<TraceRequest> eager = eagerReplicate(trace, copies);
            assertThat(lazy).hasSameSizeAs(eager);
            for (int i = 0; i < eager.size(); i++) {
                TraceRequest want = eager.get(i);
                TraceRequest got = lazy.get(i);
                assertThat(got.timestampMs()).as("copies %d, request %d", copies, i).isEqualTo(want.timestampMs());
                assertThat(got.inputLength()).isEqualTo(want.inputLength());
                assertThat(got.outputLength()).isEqualTo(want.outputLength());
                assertThat(got.hashIds()).isEqualTo(want.hashIds());
                assertThat(BlockTokens.prompt(got)).isEqualTo(BlockTokens.prompt(want));
            }
            assertThat(MooncakeTrace.infiniteCacheBound(trace, copies)).as("bound of %d copies", copies)
                    .isEqualTo(MooncakeTrace.infiniteCacheBound(eager));
        }
    }

    /** The naive model: all copies materialized, each id moved past every id of the copies before. */
    private static List<TraceRequest> eagerReplicate(List<TraceRequest> base, int copies) {
        long stride = base.stream().flatMapToLong(r -> Arrays.stream(r.hashIds())).max().orElse(0) + 1;
        List<TraceRequest> out = new ArrayList<>();
        for (int c = 0; c < copies; c++) {
            for (TraceRequest r : base) {
                long offset = c * stride;
                out.add(new TraceRequest(r.timestampMs(), r.inputLength(), r.outputLength(),
                        Arrays.stream(r.hashIds()).map(id -> id + offset).toArray()));
            }
        }
        out.sort(Comparator.comparingLong(TraceRequest::timestampMs));
        return out;
    }

    /** The conversation trace beside the checkout: its README's 0.366 block reuse with an infinite cache. */
    @Test
    void conversationTrace_hasTheDocumentedInfiniteCacheReuse() throws Exception {
        TraceParams p = TraceParams.of(Map.of(), false, 0, 1, 8, 16);
        List<TraceRequest> trace = MooncakeTrace.read(p.trace(), 0);
        assertThat(trace).hasSize(12_031);
        assertThat(MooncakeTrace.infiniteCacheBound(trace).blockRatio()).isCloseTo(0.366, within(0.0005));
    }

    @Test
    void params_areBoundedAndNameTheKey() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> TraceParams.of(Map.of("workers", "0"), false, 0, 1, 8, 16))
                .hasMessageContaining("--param workers");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> TraceParams.of(Map.of("speed", "-1"), false, 0, 1, 8, 16))
                .hasMessageContaining("--param speed");
    }

    @Test
    void runOrder_runsEveryArmOncePerRound_eachRoundRotatedByOne() {
        List<String> arms = List.of("random", "round_robin", "cache_aware/exact");
        assertThat(MooncakeTraceScenario.runOrder(arms, 1)).isEqualTo(arms);
        List<String> order = MooncakeTraceScenario.runOrder(arms, 3);
        assertThat(order).containsExactly("random", "round_robin", "cache_aware/exact", "round_robin", "cache_aware/exact",
                "random", "cache_aware/exact", "random", "round_robin");
        for (int round = 0; round < 3; round++) {
            assertThat(order.subList(3 * round, 3 * round + 3)).containsExactlyInAnyOrderElementsOf(arms);
        }
        for (String arm : arms) { // over three rounds each arm takes every place once
            assertThat(java.util.stream.IntStream.range(0, 3).map(r -> order.subList(3 * r, 3 * r + 3).indexOf(arm)).sorted()
                    .toArray()).containsExactly(0, 1, 2);
        }
    }

    @Test
    void rounds_defaultToTwoForAFullRunAndOneQuick_andAreBounded() {
        assertThat(MooncakeTraceScenario.rounds(Map.of(), false)).isEqualTo(2);
        assertThat(MooncakeTraceScenario.rounds(Map.of(), true)).isEqualTo(1);
        assertThat(MooncakeTraceScenario.rounds(Map.of("rounds", "3"), true)).isEqualTo(3);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MooncakeTraceScenario.rounds(Map.of("rounds", "0"), false))
                .hasMessageContaining("--param rounds");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MooncakeTraceScenario.rounds(Map.of("rounds", "11"), false))
                .hasMessageContaining("--param rounds");
    }

    /**
     * Shuffling bursts, against a naive model: the requests grouped by timestamp in order of first
     * appearance; each group's multiset is kept and the groups' sequence is unchanged; a seed gives one
     * order every time, and some seed moves a request inside a burst.
     */
    @Test
    void shuffleBursts_permutesOnlyInsideEachBurst_sameSeedSameOrder() throws Exception {
        List<TraceRequest> trace = MooncakeTrace.read(TraceParams.of(Map.of(), false, 0, 1, 8, 16).trace(), 600);
        java.util.Map<Long, List<TraceRequest>> model = new java.util.LinkedHashMap<>();
        trace.forEach(r -> model.computeIfAbsent(r.timestampMs(), t -> new ArrayList<>()).add(r));
        assertThat(model.values().stream().mapToInt(List::size).max().orElse(0)).as("the slice has bursts").isGreaterThan(4);
        boolean moved = false;
        for (long seed = 1; seed <= 3; seed++) {
            List<TraceRequest> shuffled = MooncakeTrace.shuffleBursts(trace, seed);
            assertThat(MooncakeTrace.shuffleBursts(trace, seed)).as("same seed").containsExactlyElementsOf(shuffled);
            java.util.Map<Long, List<TraceRequest>> groups = new java.util.LinkedHashMap<>();
            shuffled.forEach(r -> groups.computeIfAbsent(r.timestampMs(), t -> new ArrayList<>()).add(r));
            assertThat(groups.keySet()).containsExactlyElementsOf(model.keySet());
            for (Map.Entry<Long, List<TraceRequest>> e : model.entrySet()) {
                assertThat(groups.get(e.getKey())).containsExactlyInAnyOrderElementsOf(e.getValue());
                moved |= !groups.get(e.getKey()).equals(e.getValue());
            }
        }
        assertThat(moved).as("some burst reordered").isTrue();
    }
}
