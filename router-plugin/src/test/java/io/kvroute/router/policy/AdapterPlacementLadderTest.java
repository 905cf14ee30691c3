package io.kvroute.router.policy;

import static io.kvroute.router.policy.CacheAwareFixture.PROMPT;
import static io.kvroute.router.policy.CacheAwareFixture.pool;
import static io.kvroute.router.policy.CacheAwareFixture.prompt;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.lora.AdapterDirectory;
import io.kvroute.router.lora.AdapterView;
import io.kvroute.router.lora.WorkerAdapters;
import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Adapter placement inside the cache-aware ladder: a prefix holder still wins first; without one, an
 * adapter request goes where the adapter is resident unless that worker's load outweighs the residency.
 */
class AdapterPlacementLadderTest {

    private static RoutingRequest request(List<Worker> pool, Map<String, Integer> inFlight, String adapter) {
        return new RoutingRequest(pool, id -> inFlight.getOrDefault(id, 0), PROMPT, null, prompt(PROMPT), null, null,
                adapter);
    }

    private static AdapterView residentOn(String worker, String adapter) {
        return new AdapterView(Map.of(worker, new WorkerAdapters(Set.of(adapter), Set.of(adapter), Set.of(), 4, -1)),
                Map.of(adapter, "m"), Map.of());
    }

    @Test
    void miss_goesToTheResidentWorker_notTheLeastLoaded() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        f.policy.useAdapterPlacement(() -> residentOn("w-b", "sql"), 8);
        Decision d = f.policy.select(request(pool("w-a", "w-b", "w-c"), Map.of("w-b", 2), "sql"));
        assertThat(d.worker().id()).isEqualTo("w-b");
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_MISS_MIN_LOAD);
    }

    @Test
    void miss_leavesTheResidentWorkerOnceItsQueueOutweighsTheWeight() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        f.policy.useAdapterPlacement(() -> residentOn("w-b", "sql"), 8);
        // others have no slot information: affinity 0, cost 8; w-b costs its 9 requests
        Decision d = f.policy.select(request(pool("w-a", "w-b"), Map.of("w-b", 9), "sql"));
        assertThat(d.worker().id()).isEqualTo("w-a");
    }

    @Test
    void weightZero_isTheAdapterBlindLadder() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        f.policy.useAdapterPlacement(() -> residentOn("w-b", "sql"), 0);
        // min-load choices over the whole pool (64 choices: the exact minimum)
        Decision d = f.policy.select(request(pool("w-a", "w-b"), Map.of("w-b", 2), "sql"));
        assertThat(d.worker().id()).isEqualTo("w-a");
    }

    @Test
    void prefixHolderWinsOverResidency() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        // w-a holds the adapter-scoped prefix (it ran sql), w-b is where the directory saw sql running last
        RoutingRequest owned = request(pool("w-a"), Map.of(), "sql");
        CacheKey key = CacheKey.of(owned, f.config);
        f.policy.indexFor(key).insert(key.key, "w-a");
        f.policy.useAdapterPlacement(() -> residentOn("w-b", "sql"), 8);
        Decision d = f.policy.select(request(pool("w-a", "w-b"), Map.of(), "sql"));
        assertThat(d.worker().id()).isEqualTo("w-a");
        assertThat(d.reason()).isEqualTo(DecisionReason.CACHE_PRIMARY);
    }

    @Test
    void baseModelRequests_ignoreAdapterPlacement() {
        CacheAwareFixture f = new CacheAwareFixture(CacheAwareConfig.defaults());
        AdapterDirectory dir = new AdapterDirectory();
        dir.noteDispatch("w-b", "sql");
        f.policy.useAdapterPlacement(dir::current, 8);
        Decision d = f.policy.select(request(pool("w-a", "w-b"), Map.of("w-b", 2), null));
        assertThat(d.worker().id()).isEqualTo("w-a");
    }
}
