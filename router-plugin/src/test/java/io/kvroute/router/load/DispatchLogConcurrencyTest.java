package io.kvroute.router.load;

import static io.kvroute.router.load.LoadFixtures.at;
import static io.kvroute.router.load.LoadFixtures.base;
import static io.kvroute.router.load.LoadFixtures.snapshot;
import static io.kvroute.router.load.LoadFixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link DispatchLog} and the snapshot over it while dispatches are being recorded; every snapshot must
 * see a consistent count. */
class DispatchLogConcurrencyTest {
    private static final long S = 1_000_000_000L;

    /**
     * The interleaving: thread A reserves a slot and is descheduled before writing its time; threads
     * B and C record after it. A count now meets A's empty slot between B's and C's entries and the
     * older ones. It must skip the slot (A's dispatch is simply not counted yet), not stop there.
     */
    @Test
    void reservedButUnwrittenSlot_doesNotEndTheScan() {
        DispatchLog log = new DispatchLog(16);
        log.recordDispatch("w", 10);
        log.recordDispatch("w", 11);
        long slotOfA = log.reserve("w");
        log.recordDispatch("w", 13); // B
        log.recordDispatch("w", 14); // C
        assertThat(log.countBetween("w", 5, 100)).isEqualTo(4);
        log.publish("w", slotOfA, 12);
        assertThat(log.countBetween("w", 5, 100)).isEqualTo(5);
        assertThat(log.countBetween("w", 11, 100)).isEqualTo(3);
    }

    /** The same after the ring wrapped: the unwritten slot holds a recycled old time, which is no end either. */
    @Test
    void reservedSlotHoldingARecycledTime_doesNotEndTheScan() {
        DispatchLog log = new DispatchLog(8);
        for (long t = 1; t <= 8; t++) {
            log.recordDispatch("w", t);
        }
        log.recordDispatch("w", 60); // recycles the slot of t=1
        long slotOfA = log.reserve("w"); // recycles the slot of t=2, still holding 2
        log.recordDispatch("w", 100);
        log.recordDispatch("w", 101);
        assertThat(log.countBetween("w", 50, 1000)).isEqualTo(3);
        log.publish("w", slotOfA, 99);
        assertThat(log.countBetween("w", 50, 1000)).isEqualTo(4);
    }

    /**
     * One snapshot, one load per worker: a dispatch timed before the capture instant but recorded
     * after the first lookup (its slot was reserved, or its thread slow) must not change a second
     * lookup of the same decision.
     */
    @Test
    void snapshot_answersOneLoadPerWorker_whileTheLogMoves() {
        DispatchLog log = new DispatchLog();
        EngineLoadSnapshot snap = snapshot(10 * S, log, worker("a", 1, at(base(0, 0, 2, 0, 0), 9 * S)));
        long slot = log.reserve("a");
        WorkerLoad first = snap.fresh("a").orElseThrow();
        log.publish("a", slot, 9 * S + 5);
        log.recordDispatch("a", 9 * S + 6);
        assertThat(snap.fresh("a").orElseThrow()).isEqualTo(first);
        assertThat(snap.freshForAll(List.of("a")).orElseThrow().get("a")).isEqualTo(first);
        assertThat(snap.anyFreshQueueBelow(List.of("a"), 3)).isTrue(); // waiting 2 as first seen, not 4
        // A new snapshot sees both.
        EngineLoadSnapshot next = snapshot(10 * S, log, worker("a", 1, at(base(0, 0, 2, 0, 0), 9 * S)));
        assertThat(next.fresh("a").orElseThrow().numWaitingReqs()).isEqualTo(4);
    }

    /**
     * Writers record under one shared clock while a reader counts: a count never exceeds the
     * dispatches whose recording had started, never double-counts, and once the writers are done
     * the count is exact. (Only for a window that holds every time: a writer descheduled between
     * reading the clock and reserving its slot puts an older time after newer ones, and a narrower
     * window may stop at it, the documented under-count.)
     */
    @Test
    void concurrentWritersAndReader_neverOvercount_andEndExact() throws Exception {
        int capacity = 4096;
        int writers = 3;
        int perWriter = 1000;
        DispatchLog log = new DispatchLog(capacity);
        AtomicLong clock = new AtomicLong(1000);
        AtomicLong started = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    for (int i = 0; i < perWriter; i++) {
                        started.incrementAndGet();
                        log.recordDispatch("w", clock.incrementAndGet());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.start();
            threads.add(t);
        }
        Thread reader = new Thread(() -> {
            try {
                go.await();
                while (!done.get()) {
                    int n = log.countBetween("w", 1000, Long.MAX_VALUE);
                    long upper = started.get();
                    if (n > upper) {
                        throw new AssertionError("counted " + n + " of at most " + upper + " started");
                    }
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        reader.start();
        go.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
        done.set(true);
        reader.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(failure.get()).isNull();
        assertThat(log.countBetween("w", 1000, Long.MAX_VALUE)).isEqualTo(writers * perWriter);
    }
}
