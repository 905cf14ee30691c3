package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The router's own recent dispatches per worker, so a snapshot can add the requests sent after a
 * worker's last load report: a report counts what the engine saw at its capture time, so dispatches
 * this router made after that instant are added on top (as SGLang's router does in
 * {@code experimental/sgl-router/src/policies/engine_load.rs}).
 *
 * <p>Per worker a ring of the last {@link #capacity} dispatch times (nanos, the router's clock).
 * {@link #recordDispatch} is lock-free and safe from any thread: it reserves a slot (one
 * {@code getAndIncrement}), then publishes the time and, last, the slot's sequence number.
 * {@link #countBetween} scans back from the newest reserved slot and reads each slot seqlock-style
 * (sequence, time, sequence again): a slot whose sequence is not the one it expects is either
 * reserved but not yet written, or being overwritten by a writer that lapped the ring; it is skipped,
 * not taken as the end of the history (reading its stale time as "older than the report" used to
 * stop the scan and miss every recent dispatch behind it). The scan stops at the first published
 * time at or before {@code afterNanos}, or at a slot already recycled by a newer dispatch; it
 * saturates at {@code capacity} (with reports every few hundred ms, 1024 covers thousands of
 * requests/s per worker). A dispatch recorded concurrently with a count may be missed by that count,
 * never double-counted. Times are assumed non-decreasing in slot order per worker (one monotonic
 * clock, read just before recording).
 *
 * <p>Counts move while dispatches are recorded, so one decision must not count twice:
 * {@link EngineLoadSnapshot} counts each worker once and keeps the answer.
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
        Ring ring = ring(workerId);
        ring.publish(ring.reserve(), nowNanos);
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

    /** The first half of {@link #recordDispatch}: a slot reserved, not yet written (the race's seam for tests). */
    long reserve(String workerId) {
        return ring(workerId).reserve();
    }

    /** The second half of {@link #recordDispatch}: writes a slot from {@link #reserve}. */
    void publish(String workerId, long slot, long nowNanos) {
        ring(workerId).publish(slot, nowNanos);
    }

    private Ring ring(String workerId) {
        requireNonNull(workerId, "workerId");
        return rings.computeIfAbsent(workerId, k -> new Ring(capacity));
    }

    private static final class Ring {
        /** Per slot k: {@code [2k]} = sequence + 1 of the dispatch it holds (0 = never, -1 = being written), {@code [2k+1]} = time. */
        private final AtomicLongArray slots;
        private final int length;
        private final AtomicLong next = new AtomicLong();

        Ring(int capacity) {
            length = capacity;
            slots = new AtomicLongArray(2 * capacity);
        }

        long reserve() {
            return next.getAndIncrement();
        }

        void publish(long slot, long t) {
            int k = (int) (slot % length);
            slots.set(2 * k, -1); // a reader of the previous occupant now sees a torn slot and skips it
            slots.set(2 * k + 1, t);
            slots.set(2 * k, slot + 1);
        }

        int countBetween(long after, long until) {
            long end = next.get();
            long start = Math.max(0, end - length);
            int n = 0;
            for (long i = end - 1; i >= start; i--) {
                int k = (int) (i % length);
                long seq = slots.get(2 * k);
                if (seq > i + 1) {
                    break; // recycled by a newer dispatch: everything older is gone too
                }
                if (seq != i + 1) {
                    continue; // reserved but not yet written (or being rewritten): not counted, not the end
                }
                long t = slots.get(2 * k + 1);
                if (slots.get(2 * k) != i + 1) {
                    continue; // overwritten while read
                }
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
