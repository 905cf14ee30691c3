package io.kvroute.router.load;

import java.util.Map;

/**
 * The versioned, immutable table the load-plane thread publishes through a volatile field. The
 * index map is shared between versions until membership changes; the state array is copied per
 * version (one reference per worker), so publishing after a batch of reports costs O(workers).
 */
record LoadTable(long version, Map<String, Integer> index, WorkerState[] workers) {
    static final LoadTable EMPTY = new LoadTable(0, Map.of(), new WorkerState[0]);

    WorkerState get(String workerId) {
        Integer i = index.get(workerId);
        return i == null ? null : workers[i];
    }
}
