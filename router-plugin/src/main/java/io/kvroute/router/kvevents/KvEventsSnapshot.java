package io.kvroute.router.kvevents;

import io.kvroute.router.worker.VllmHashSpec;
import java.util.List;
import java.util.Map;

/**
 * What the events plane knows of each subscribed worker, immutable, replaced as a whole by the
 * events thread and read lock-free by requests.
 */
public record KvEventsSnapshot(long version, Map<String, WorkerEvents> workers) {
    static final KvEventsSnapshot EMPTY = new KvEventsSnapshot(0, Map.of());

    /**
     * One worker: its index key parts, one slot and one stream state per dp rank.
     *
     * @param live true when every rank's stream is LIVE, or NEW (it has sent nothing and has nothing to
     *        catch up from, so it holds nothing): the index is exact for this worker
     * @param hashMode how its blocks are keyed, so a query hashes the request the same way
     * @param vllmHash for a vLLM worker keyed by its engine hashes, the engines' algorithm and
     *        {@code PYTHONHASHSEED} (queries follow vLLM's chain, {@link io.kvroute.protocol.VllmBlockHash}); null otherwise
     */
    public record WorkerEvents(String model, int blockSize, int[] slots, List<String> states, boolean live,
                               KvHashMode hashMode, VllmHashSpec vllmHash) {
        public WorkerEvents(String model, int blockSize, int[] slots, List<String> states, boolean live,
                KvHashMode hashMode) {
            this(model, blockSize, slots, states, live, hashMode, null);
        }
    }

    /** The worker's entry, or null when it is not subscribed. */
    public WorkerEvents get(String workerId) {
        return workers.get(workerId);
    }
}
