package io.kvroute.bench.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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
}
