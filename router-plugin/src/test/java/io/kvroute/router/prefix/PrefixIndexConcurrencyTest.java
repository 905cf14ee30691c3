package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PrefixIndexConcurrencyTest {
    private record Insert(long tick, int[] key, String worker) {}

    /**
     * Eight threads insert and match concurrently. Each insert reads the clock once, under the lock,
     * so its tick is its position in the serial order; replaying the inserts by tick into the naive
     * model must give exactly the final tree (ownership, ticks, eviction counts).
     */
    @Test
    void concurrentInsertAndMatch_endInAStateOfSomeSerialOrder() throws Exception {
        AtomicLong clock = new AtomicLong();
        ThreadLocal<Long> lastTick = new ThreadLocal<>();
        PrefixIndexConfig config = new PrefixIndexConfig(40, 60);
        PrefixIndex index = new PrefixIndex(config, () -> {
            long t = clock.incrementAndGet();
            lastTick.set(t);
            return t;
        });
        int threads = 8;
        List<Insert> log = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    SplittableRandom rnd = new SplittableRandom(thread);
                    start.await();
                    for (int i = 0; i < 2_000; i++) {
                        int[] key = randomKey(rnd);
                        if (rnd.nextBoolean()) {
                            String worker = "w" + rnd.nextInt(4);
                            index.insert(key, worker);
                            log.add(new Insert(lastTick.get(), key, worker));
                        } else {
                            PrefixMatch m = index.match(key);
                            assertThat(m.maxMatchedLength()).isBetween(0, key.length);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }

        NaivePrefixModel model = new NaivePrefixModel(config);
        log.sort((a, b) -> Long.compare(a.tick, b.tick));
        for (Insert insert : log) {
            model.insert(insert.key, insert.worker, insert.tick);
        }
        PrefixIndexInvariants.check(index);
        assertThat(PrefixIndexInvariants.expand(index)).isEqualTo(model.positions);
        assertThat(index.stats().evictedElements()).isEqualTo(model.evictedElements);
        assertThat(index.stats().evictedElements()).isPositive();
    }

    private static int[] randomKey(SplittableRandom rnd) {
        int[] key = new int[1 + rnd.nextInt(8)];
        for (int i = 0; i < key.length; i++) {
            key[i] = i < 2 ? 'a' : 'a' + rnd.nextInt(3);
        }
        return key;
    }
}
