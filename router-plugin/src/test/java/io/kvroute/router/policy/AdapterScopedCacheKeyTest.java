package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The cache-aware tree keys prompts by (prompt, adapter): checked exactly and against a naive model. */
class AdapterScopedCacheKeyTest {

    private static final int LENGTH = 2048;

    private static RoutingRequest request(List<Worker> workers, int[] ids, String adapter) {
        return new RoutingRequest(workers, id -> 0, ids.length, null, ids, null, null, adapter);
    }

    private static int[] prompt(int seed, int length) {
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = seed * 100_000 + i;
        }
        return ids;
    }

    @Test
    void samePromptUnderAnotherAdapterOrTheBaseModel_isNoHit() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        List<Worker> workers = pool("w-a", "w-b");
        int[] ids = prompt(1, LENGTH);
        RoutingRequest sql = request(workers, ids, "sql-v3");
        f.policy.recordDispatch(new Decision(CacheAwareFixture.w("w-b"), DecisionReason.CACHE_MISS_MIN_LOAD, "none",
                f.policy.select(sql).cacheAware()));

        Decision again = f.policy.select(sql);
        assertThat(again.worker().id()).isEqualTo("w-b");
        assertThat(again.cacheAware().selectedMatchedTokens()).isEqualTo(LENGTH); // the header is not a token
        assertThat(f.policy.select(request(workers, ids, "chat-v1")).cacheAware().bestMatchedTokens()).isZero();
        assertThat(f.policy.select(request(workers, ids, null)).cacheAware().bestMatchedTokens()).isZero();
    }

    @Test
    void adapterHeader_isNeverATokenAndHalvesNoRatio() {
        CacheAwareConfig config = CacheAwareConfig.defaults();
        CacheKey key = CacheKey.of(request(pool("w-a"), prompt(2, 10), "a"), config);
        assertThat(key.key.length()).isEqualTo(10 + CacheKey.ADAPTER_HEADER);
        assertThat(key.toTokens(CacheKey.ADAPTER_HEADER)).isZero();
        assertThat(key.nothingMatched(CacheKey.ADAPTER_HEADER)).isTrue();
        assertThat(key.toTokens(CacheKey.ADAPTER_HEADER + 5)).isEqualTo(5);
        assertThat(key.matchRatio(CacheKey.ADAPTER_HEADER + 5)).isEqualTo(0.5);
        CacheKey base = CacheKey.of(request(pool("w-a"), prompt(2, 10), null), config);
        assertThat(base.key.length()).isEqualTo(10);
        assertThat(base.key.toString()).doesNotContain("length=12");
    }

    /**
     * Random (prompt family, adapter, worker) dispatches; after each, every worker's matched tokens for
     * a random probe equal the naive model's: the longest common prefix with any prompt dispatched to
     * that worker under the SAME adapter (null = base). Prompt families share prefixes so partial hits
     * happen; the tree is large enough that nothing is evicted.
     */
    @Test
    void matchedTokens_equalTheNaiveModelOfPerAdapterPrefixes() {
        SplittableRandom random = new SplittableRandom(29);
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults().withMinMatch(1, 0.0));
        List<Worker> workers = pool("w-a", "w-b", "w-c");
        String[] adapters = {null, "sql-v3", "chat-v1"};
        record Sent(String worker, String adapter, int[] ids) {}
        List<Sent> sent = new ArrayList<>();
        for (int step = 0; step < 300; step++) {
            int[] ids = familyPrompt(random);
            String adapter = adapters[random.nextInt(adapters.length)];
            Worker target = workers.get(random.nextInt(workers.size()));
            Decision seen = f.policy.select(request(workers, ids, adapter));
            f.policy.recordDispatch(new Decision(target, DecisionReason.CACHE_MISS_MIN_LOAD, "none", seen.cacheAware()));
            sent.add(new Sent(target.id(), adapter, ids));

            int[] probe = familyPrompt(random);
            String probeAdapter = adapters[random.nextInt(adapters.length)];
            Map<String, Long> expected = new HashMap<>();
            for (Sent s : sent) {
                if (Objects.equals(s.adapter(), probeAdapter)) {
                    expected.merge(s.worker(), (long) commonPrefix(s.ids(), probe), Math::max);
                }
            }
            long expectedBest = expected.values().stream().mapToLong(Long::longValue).max().orElse(0);
            Decision d = f.policy.select(request(workers, probe, probeAdapter));
            assertThat(d.cacheAware().bestMatchedTokens()).as("step %d adapter %s", step, probeAdapter)
                    .isEqualTo(expectedBest);
            if (expectedBest > 0) {
                assertThat(expected.get(d.worker().id())).as("step %d", step).isEqualTo(expectedBest);
            }
        }
    }

    /** One of 4 families x 4 branches: a shared head of 64-512 tokens, then a branch tail. */
    private static int[] familyPrompt(SplittableRandom random) {
        int family = random.nextInt(4);
        int branch = random.nextInt(4);
        int head = 64 << family;
        int[] ids = new int[head + 32 + random.nextInt(32)];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = i < head ? family * 10_000 + i : (family * 10 + branch) * 10_000 + i;
        }
        return ids;
    }

    private static int commonPrefix(int[] a, int[] b) {
        int n = Arrays.mismatch(a, b);
        return n < 0 ? a.length : n;
    }
}
