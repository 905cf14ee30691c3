package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The router's own recent dispatches per worker, so a snapshot can add the requests sent after a
 * worker's last load report (REFERENCE §2: "dispatches made by this router after captured_at are
 * added on top").
 *
 * <p>Per worker a ring of the last {@link #capacity} dispatch times (nanos, the router's clock).
 * {@link #recordDispatch} is lock-free and safe from any thread. {@link #countBetween} scans back
 * from the newest entry and stops at the first one at or before {@code afterNanos}; it saturates at
 * {@code capacity} (with reports every few hundred ms, 1024 covers thousands of requests/s per
 * worker). A dispatch recorded concurrently with a count may be missed by that count, never
 * double-counted. Timestamps are assumed non-decreasing per worker (one monotonic clock).
 */
public final class DispatchLog {
    /** Default ring size per worker: bounds memory and the scan of one count. */
    public static final int DEFAULT_CAPACITY = 1024;

    private final int capacity;
    private final ConcurrentHashMap<String, Ring> rings = new ConcurrentHashMap<>();

    public DispatchLog() {
        this(DEFAULT_CAPACITY);
    }

    public DispatchLog(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("dispatch log capacity must be at least 1, got " + capacity);
        }
        this.capacity = capacity;
    }

    /** Records that this router sent one request to {@code workerId} at {@code nowNanos}. */
    public void recordDispatch(String workerId, long nowNanos) {
        requireNonNull(workerId, "workerId");
        rings.computeIfAbsent(workerId, k -> new Ring(capacity)).add(nowNanos);
    }

    /** Dispatches to {@code workerId} with {@code afterNanos < t <= untilNanos}, at most {@code capacity}. */
    public int countBetween(String workerId, long afterNanos, long untilNanos) {
        Ring r = rings.get(workerId);
        return r == null ? 0 : r.countBetween(afterNanos, untilNanos);
    }

    /** Drops a worker's history (on removal). */
    public void forget(String workerId) {
        rings.remove(workerId);
    }

    private static final class Ring {
        private final AtomicLongArray times;
        private final AtomicLong next = new AtomicLong();

        Ring(int capacity) {
            times = new AtomicLongArray(capacity);
        }

        void add(long t) {
            long slot = next.getAndIncrement();
            times.set((int) (slot % times.length()), t);
        }

        int countBetween(long after, long until) {
            long end = next.get();
            long start = Math.max(0, end - times.length());
            int n = 0;
            for (long i = end - 1; i >= start; i--) {
                long t = times.get((int) (i % times.length()));
                if (t <= after) {
                    break;
                }
                if (t <= until) {
                    n++;
                }
            }
            return n;
        }
    }
}
