package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.PROMPT;
import static io.kvroute.router.policy.CacheAwareFixture.prompt;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The exact index's best dp rank rides on the decision only for a vLLM worker whose match the exact
 * index found: vLLM takes the rank by header, SGLang places requests with its own DP controller.
 */
class DataParallelRankPinTest {

    /** An exact source where w-a holds 2,048 tokens on rank 1; records which workers were asked for a rank. */
    private static class RankedSource implements ExactPrefixSource {
        final List<String> rankAsked = new ArrayList<>();

        @Override
        public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds) {
            return Map.of("w-a", 2048L, "w-b", 0L);
        }

        @Override
        public int bestRank(Worker worker, int[] tokenIds) {
            rankAsked.add(worker.id());
            return worker.id().equals("w-a") ? 1 : -1;
        }
    }

    private static List<Worker> pool(EngineType engine) {
        return List.of(CacheAwareFixture.w("w-a").withEngine(engine), CacheAwareFixture.w("w-b").withEngine(engine));
    }

    @Test
    void vllmHolder_carriesTheRankThatHoldsTheMatch() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        RankedSource source = new RankedSource();
        f.policy.useExactIndex(source, true);
        Decision hit = f.policy.select(new RoutingRequest(pool(EngineType.VLLM), id -> 0, PROMPT, null, prompt(PROMPT)));
        assertThat(hit.worker().id()).isEqualTo("w-a");
        assertThat(hit.cacheAware().dataParallelRank()).isEqualTo(1);
        assertThat(source.rankAsked).containsExactly("w-a");
    }

    @Test
    void sglangHolder_isNotPinned_andTheRankIsNotComputed() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        RankedSource source = new RankedSource();
        f.policy.useExactIndex(source, true);
        Decision hit = f.policy.select(new RoutingRequest(pool(EngineType.SGLANG), id -> 0, PROMPT, null, prompt(PROMPT)));
        assertThat(hit.worker().id()).isEqualTo("w-a");
        assertThat(hit.cacheAware().dataParallelRank()).isEqualTo(-1);
        assertThat(source.rankAsked).isEmpty();
    }

    /** The rank is asked for the blocks the request would reuse: its adapter and its extras (a cache salt). */
    @Test
    void rankIsAskedWithTheRequestsAdapterAndExtras() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        List<String> asked = new ArrayList<>();
        RankedSource source = new RankedSource() {
            @Override
            public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds, String adapter,
                    PromptExtras extras) {
                return matchedTokens(candidates, tokenIds); // the adapter's and salt's blocks, held as before
            }

            @Override
            public int bestRank(Worker worker, int[] tokenIds, String adapter, PromptExtras extras) {
                asked.add(adapter + "/" + extras.cacheSalt());
                return super.bestRank(worker, tokenIds);
            }
        };
        f.policy.useExactIndex(source, true);
        Decision hit = f.policy.select(new RoutingRequest(pool(EngineType.VLLM), id -> 0, PROMPT, null, prompt(PROMPT),
                null, null, "sql-lora", null, PromptExtras.of("tenant-a", null)));
        assertThat(hit.cacheAware().dataParallelRank()).isEqualTo(1);
        assertThat(asked).containsExactly("sql-lora/tenant-a");
    }

    @Test
    void vllmMiss_isNotPinned() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        RankedSource source = new RankedSource() {
            @Override
            public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds) {
                return Map.of("w-a", 0L, "w-b", 0L);
            }
        };
        f.policy.useExactIndex(source, true);
        Decision miss = f.policy.select(new RoutingRequest(pool(EngineType.VLLM), id -> 0, PROMPT, null, prompt(PROMPT)));
        assertThat(miss.cacheAware().dataParallelRank()).isEqualTo(-1);
        assertThat(source.rankAsked).isEmpty();
    }
}
