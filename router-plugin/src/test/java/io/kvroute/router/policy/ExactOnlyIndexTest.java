package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.prefix.PrefixIndex;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code --cache-index exact}: the prefix tree is neither asked nor built, and every answer is labelled exact. */
class ExactOnlyIndexTest {

    @Test
    void exactOnly_neverBuildsTheTree_andLabelsMissesExact() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        // the engine index knows w-a holds 2,048 tokens; w-b publishes nothing the index answers for
        f.policy.useExactIndex((candidates, tokenIds) -> Map.of("w-a", 2048L), true);
        Decision hit = f.select(pool("w-a", "w-b"), null);
        assertThat(hit.worker().id()).isEqualTo("w-a");
        assertThat(hit.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_EXACT);
        f.policy.recordDispatch(hit);

        f.policy.useExactIndex((candidates, tokenIds) -> Map.of(), true); // nobody holds the prompt
        for (int i = 0; i < 3; i++) {
            Decision miss = f.select(pool("w-a", "w-b"), null);
            assertThat(miss.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_EXACT);
            f.policy.recordDispatch(miss);
        }
        for (PrefixIndex index : f.policy.prefixIndexes().values()) {
            assertThat(index.stats().elements()).isZero();
        }
    }

    @Test
    void auto_stillBuildsTheTreeForWorkersTheExactIndexDoesNotKnow() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        f.policy.useExactIndex((candidates, tokenIds) -> Map.of(), false);
        Decision miss = f.select(pool("w-a", "w-b"), null);
        assertThat(miss.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_APPROXIMATE);
        f.policy.recordDispatch(miss);
        long elements = f.policy.prefixIndexes().values().stream().mapToLong(i -> i.stats().elements()).sum();
        assertThat(elements).isPositive();
    }
}
