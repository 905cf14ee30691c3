package io.kvroute.router.policy;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** A cache_aware policy over a hand-built prefix index, for exact ladder tests. */
final class CacheAwareFixture {
    /** Request length in tokens; the prompt is ids 0..PROMPT-1. */
    static final int PROMPT = 4096;

    final CacheAwareConfig config;
    final CacheAwarePolicy policy;
    private long tick;

    CacheAwareFixture(CacheAwareConfig config) {
        this.config = config;
        // min-load choices 64 >= any test pool: the fallback is the exact minimum, deterministic.
        this.policy = new CacheAwarePolicy(config, 64, () -> new SplittableRandom(7), () -> ++tick);
    }

    static Worker w(String id) {
        return new Worker(id, "http://" + id + ":1", WorkerRole.PREFILL, "m", null, List.of());
    }

    static List<Worker> pool(String... ids) {
        List<Worker> out = new ArrayList<>();
        for (String id : ids) {
            out.add(w(id));
        }
        return out;
    }

    static int[] prompt(int length) {
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = i;
        }
        return ids;
    }

    /** Makes {@code workerId} own the first {@code tokens} tokens of the standard prompt. */
    CacheAwareFixture own(String workerId, int tokens) {
        RoutingRequest r = new RoutingRequest(pool(workerId), id -> 0, tokens, null, prompt(tokens));
        CacheKey key = CacheKey.of(r, config);
        policy.indexFor(key).insert(key.key, workerId);
        return this;
    }

    Decision select(List<Worker> pool, EngineLoadSnapshot loads) {
        return policy.select(new RoutingRequest(pool, id -> 0, PROMPT, null, prompt(PROMPT), loads));
    }
}
