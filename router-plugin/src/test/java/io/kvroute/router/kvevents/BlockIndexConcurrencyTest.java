package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * One writer, lock-free readers, as the events plane runs them. A slot whose chain is stored once and
 * never touched again must match exactly at every read, while the writer churns other slots through
 * everything that republishes or dirties the table: chains sharing the stable slot's blocks, middle
 * removals (holes), clears, growth past 64 slots (wider masks) and table growth (rehash), recounts.
 * A read may see another slot's event half-applied (documented); it may never lose the stable slot.
 */
class BlockIndexConcurrencyTest {

    private static final BlockIndex.Key KEY = new BlockIndex.Key("m", -1, 16);
    private static final int STABLE_BLOCKS = 2_000;
    private static final int SLOTS = 72;

    @Test
    void aStableSlotMatchesExactlyAtEveryRead_whileTheWriterChurnsTheRest() throws Exception {
        SplittableRandom rnd = new SplittableRandom(7);
        BlockIndex index = new BlockIndex(1 << 20);
        long[] stable = new long[STABLE_BLOCKS];
        for (int i = 0; i < stable.length; i++) {
            stable[i] = rnd.nextLong();
        }
        index.store(KEY, 0, stable);
        long[] request = new long[STABLE_BLOCKS + 100];
        System.arraycopy(stable, 0, request, 0, STABLE_BLOCKS);
        for (int i = STABLE_BLOCKS; i < request.length; i++) {
            request[i] = rnd.nextLong();
        }

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(2);
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            Thread reader = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        int[] matched = index.match(KEY, request, SLOTS);
                        if (matched[0] != STABLE_BLOCKS) {
                            violations.add("stable slot matched " + matched[0]);
                        }
                        for (int s = 1; s < SLOTS; s++) {
                            if (matched[s] < 0 || matched[s] > request.length) {
                                violations.add("slot " + s + " matched " + matched[s]);
                            }
                        }
                        reads.incrementAndGet();
                    }
                } catch (RuntimeException e) {
                    violations.add(e.toString());
                } finally {
                    done.countDown();
                }
            }, "reader-" + r);
            reader.setDaemon(true);
            readers.add(reader);
            reader.start();
        }

        long clockNanos = 0;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_000);
        int events = 0;
        while (System.nanoTime() < deadline || events < 4_000) {
            int slot = 1 + rnd.nextInt(SLOTS - 1);
            int op = rnd.nextInt(10);
            if (op < 5) {
                // a chain that shares a prefix of the stable slot's blocks, then its own
                int shared = rnd.nextInt(STABLE_BLOCKS);
                long[] chain = new long[shared + 1 + rnd.nextInt(200)];
                System.arraycopy(stable, 0, chain, 0, shared);
                for (int i = shared; i < chain.length; i++) {
                    chain[i] = rnd.nextLong();
                }
                index.store(KEY, slot, chain);
            } else if (op < 8) {
                int from = rnd.nextInt(STABLE_BLOCKS);
                long[] gone = new long[1 + rnd.nextInt(50)];
                for (int i = 0; i < gone.length; i++) {
                    gone[i] = stable[Math.min(STABLE_BLOCKS - 1, from + i)]; // holes in the shared part, never slot 0's bits
                }
                index.remove(slot, gone);
            } else if (op < 9) {
                index.clear(slot);
            } else {
                clockNanos += TimeUnit.SECONDS.toNanos(2);
                index.maintain(clockNanos);
            }
            events++;
        }
        stop.set(true);
        assertThat(done.await(30, TimeUnit.SECONDS)).as("readers stopped").isTrue();

        assertThat(violations).as("after %d reads over %d writer events", reads.get(), events).isEmpty();
        assertThat(reads.get()).as("readers ran alongside the writer").isPositive();
        assertThat(index.match(KEY, request, SLOTS)[0]).isEqualTo(STABLE_BLOCKS);
    }
}
