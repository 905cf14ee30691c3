package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static io.kvroute.router.policy.CacheAwareFixture.prompt;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@code --cache-index auto} with the in-flight grace: an engine publishes a prompt's blocks only once it
 * has computed them, so a follow-up sent while the previous turn still prefills finds nothing in the exact
 * index. The router's own recent dispatch (the tree's claim, younger than the grace) stands for that worker
 * when its exact answer is below the candidate threshold; an older claim, or an exact answer that passes
 * the threshold, leaves the exact answer in charge.
 */
class InflightGraceTest {
    private static final int PROMPT = CacheAwareFixture.PROMPT;
    private final AtomicLong nowMillis = new AtomicLong(1_000_000);
    private final CacheAwarePolicy policy = new CacheAwarePolicy(CacheAwareConfig.defaults(), 64,
            () -> new SplittableRandom(7), nowMillis::get);
    private final List<Worker> pool = pool("w-a", "w-b", "w-c");

    /** The previous turn (the first {@code tokens} of the prompt) was dispatched to {@code worker} now. */
    private void dispatched(String worker, int tokens) {
        RoutingRequest r = new RoutingRequest(pool(worker), id -> 0, tokens, null, prompt(tokens));
        CacheKey key = CacheKey.of(r, CacheAwareConfig.defaults());
        policy.indexFor(key).insert(key.key, worker);
    }

    private Decision next() {
        return policy.select(new RoutingRequest(pool, id -> 0, PROMPT, null, prompt(PROMPT)));
    }

    @Test
    void aPrefixSentWithinTheGrace_outranksAnExactAnswerOfNothing() {
        policy.useExactIndex((candidates, ids) -> Map.of("w-a", 0L, "w-b", 0L, "w-c", 0L), false, 10_000);
        dispatched("w-b", 3_072);
        nowMillis.addAndGet(2_000); // the engine is still prefilling it
        Decision d = next();
        assertThat(d.worker().id()).isEqualTo("w-b");
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
        assertThat(d.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_APPROXIMATE);
    }

    @Test
    void aClaimOlderThanTheGrace_yieldsToTheExactAnswer() {
        policy.useExactIndex((candidates, ids) -> Map.of("w-a", 0L, "w-b", 0L, "w-c", 0L), false, 10_000);
        dispatched("w-b", 3_072);
        nowMillis.addAndGet(10_001); // long done: the engine says it holds nothing (evicted)
        Decision d = next();
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
        assertThat(d.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_EXACT);
    }

    @Test
    void withoutGrace_theExactAnswerAlwaysWins() {
        policy.useExactIndex((candidates, ids) -> Map.of("w-a", 0L, "w-b", 0L, "w-c", 0L), false, 0);
        dispatched("w-b", 3_072);
        Decision d = next();
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
    }

    @Test
    void aLargerExactAnswer_isKept_andAnotherWorkersExactHitStillCompetes() {
        // w-c's engine holds 4,000 tokens; w-b was just sent 3,072: the longer exact match wins
        policy.useExactIndex((candidates, ids) -> Map.of("w-a", 0L, "w-b", 2_048L, "w-c", 4_000L), false, 10_000);
        dispatched("w-b", 3_072);
        Decision d = next();
        assertThat(d.worker().id()).isEqualTo("w-c");
        assertThat(d.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_EXACT);
    }

    @Test
    void anExactAnswerThatMakesTheWorkerACandidate_stands_evenBelowTheTreesFreshClaim() {
        // the engine published the earlier 1,024 tokens; the 2,048 after them are in flight: the exact answer
        // already routes the request there, labelled as the engine's truth
        policy.useExactIndex((candidates, ids) -> Map.of("w-a", 0L, "w-b", 1_024L, "w-c", 0L), false, 10_000);
        dispatched("w-b", 3_072);
        Decision d = next();
        assertThat(d.worker().id()).isEqualTo("w-b");
        assertThat(d.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_EXACT);
    }

    @Test
    void exactOnly_neverTakesTheTreesClaim() {
        policy.useExactIndex((candidates, ids) -> Map.of("w-a", 0L, "w-b", 0L, "w-c", 0L), true, 10_000);
        dispatched("w-b", 3_072);
        Decision d = next();
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
        assertThat(d.cacheAware().matchIndex()).isEqualTo(CacheAwareDetail.INDEX_EXACT);
    }
}
