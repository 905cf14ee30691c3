package io.kvroute.router.load;

import java.util.HashMap;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * Router-local in-flight counts frozen for one decision: each worker's live counter is read once,
 * so a comparator sorting on it sees the same number on every call while other threads dispatch
 * and complete (a counter that moves mid-sort breaks the comparator contract, and TimSort may
 * throw). Each id is read on first use and then kept (lazily: with engine data most comparisons never
 * reach the in-flight key). Bound to one decision on one thread: not thread-safe.
 */
final class InFlightSnapshot implements ToIntFunction<String> {
    private final ToIntFunction<String> live;
    private final Map<String, Integer> frozen = new HashMap<>();

    InFlightSnapshot(ToIntFunction<String> live) {
        this.live = live;
    }

    @Override
    public int applyAsInt(String workerId) {
        Integer n = frozen.get(workerId);
        if (n == null) {
            n = live.applyAsInt(workerId);
            frozen.put(workerId, n);
        }
        return n;
    }
}
