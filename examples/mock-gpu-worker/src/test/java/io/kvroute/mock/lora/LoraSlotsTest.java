package io.kvroute.mock.lora;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class LoraSlotsTest {

    /** Timer tasks the test runs by hand. */
    private static final class ManualScheduler implements LoraSlots.Scheduler {
        final List<Runnable> tasks = new ArrayList<>();
        final List<Long> delays = new ArrayList<>();

        @Override
        public synchronized void schedule(Runnable task, long delayNanos) {
            tasks.add(task);
            delays.add(delayNanos);
        }

        void runAll() {
            while (true) {
                Runnable next;
                synchronized (this) {
                    if (tasks.isEmpty()) {
                        return;
                    }
                    next = tasks.remove(0);
                }
                next.run();
            }
        }
    }

    private final ManualScheduler timer = new ManualScheduler();

    private LoraSlots slots(int max, boolean runtime, String... preloaded) {
        Map<String, String> pre = new java.util.LinkedHashMap<>();
        for (String p : preloaded) {
            pre.put(p, "/loras/" + p);
        }
        return new LoraSlots(max, 300, runtime, pre, timer);
    }

    @Test
    void unsalted_takesAnAdaptersCachedIdsBackToItsNameAndRealIds_andLeavesBaseIdsAlone() {
        LoraSlots s = slots(2, true, "a", "b");
        s.acquire("b");
        timer.runAll();
        int[] ids = {7, 151_643, 0, 1_048_575};
        int saltB = s.acquire("b").join().cacheSalt();
        LoraSlots.AdapterPages pages = s.unsalted(LoraSlots.salted(ids, saltB));
        assertThat(pages.loraName()).isEqualTo("b");
        assertThat(pages.loraId()).isEqualTo(2); // registration number, as vLLM's adapter_id counts from 1
        assertThat(pages.tokenIds()).containsExactly(ids);
        assertThat(s.unsalted(ids)).as("base-model ids").isNull();
        assertThat(s.unsalted(new int[] {saltB | 5, 6})).as("not one adapter's chain").isNull();
        assertThat(s.unsalted(new int[] {(9 << 20) | 5})).as("no adapter has that number").isNull();
        assertThat(s.unsalted(new int[0])).isNull();
    }

    @Test
    void firstRequestLoadsAfterTheLatency_laterOnesServeAtOnce() {
        LoraSlots s = slots(2, false, "a");
        CompletableFuture<LoraSlots.Lease> first = s.acquire("a");
        CompletableFuture<LoraSlots.Lease> joined = s.acquire("a");
        assertThat(first).isNotDone();
        assertThat(timer.delays).containsExactly(300L);
        assertThat(s.stats().waiting()).containsExactly("a");
        timer.runAll();
        assertThat(first).isCompleted();
        assertThat(joined).isCompleted();
        assertThat(s.stats().running()).containsExactly("a");
        first.join().release();
        joined.join().release();
        assertThat(s.acquire("a")).isCompleted(); // resident: no second load
        assertThat(s.stats().loads()).isEqualTo(1);
    }

    @Test
    void fullSlots_evictTheLeastRecentlyUsedIdleAdapter() {
        LoraSlots s = slots(2, false, "a", "b", "c");
        CompletableFuture<LoraSlots.Lease> a = s.acquire("a");
        CompletableFuture<LoraSlots.Lease> b = s.acquire("b");
        timer.runAll();
        b.join().release();
        a.join().release();
        s.acquire("a").join().release(); // a used after b: b is the least recently used idle adapter
        CompletableFuture<LoraSlots.Lease> c = s.acquire("c");
        timer.runAll();
        assertThat(c).isCompleted();
        assertThat(s.stats().evictions()).isEqualTo(1);
        CompletableFuture<LoraSlots.Lease> a2 = s.acquire("a");
        assertThat(a2).isCompleted(); // a stayed resident
        CompletableFuture<LoraSlots.Lease> b2 = s.acquire("b");
        assertThat(b2).isNotDone(); // b was evicted; a and c are in use, so b waits
        assertThat(s.stats().waiting()).containsExactly("b");
    }

    @Test
    void busySlots_queueTheRequestUntilOneIsReleased() {
        LoraSlots s = slots(1, false, "a", "b");
        CompletableFuture<LoraSlots.Lease> a = s.acquire("a");
        timer.runAll();
        CompletableFuture<LoraSlots.Lease> b = s.acquire("b");
        assertThat(b).isNotDone();
        assertThat(timer.tasks).isEmpty(); // nothing loads while a is in use
        a.join().release();
        timer.runAll();
        assertThat(b).isCompleted();
        assertThat(s.stats().loads()).isEqualTo(2);
        assertThat(s.stats().evictions()).isEqualTo(1);
    }

    @Test
    void unknownAdapter_isNotServed_unlessRuntimeUpdatingResolvesIt() {
        assertThat(slots(2, false).acquire("x")).isCompletedExceptionally();
        LoraSlots runtime = slots(2, true);
        CompletableFuture<LoraSlots.Lease> x = runtime.acquire("x");
        timer.runAll();
        assertThat(x).isCompleted();
        assertThat(runtime.served()).containsEntry("x", "x");
    }

    @Test
    void cacheSalts_differPerAdapter_andFromTheBase() {
        LoraSlots s = slots(3, false, "a", "b");
        CompletableFuture<LoraSlots.Lease> a = s.acquire("a");
        CompletableFuture<LoraSlots.Lease> b = s.acquire("b");
        timer.runAll();
        int sa = a.join().cacheSalt();
        int sb = b.join().cacheSalt();
        assertThat(sa).isNotZero().isNotEqualTo(sb);
        assertThat(LoraSlots.salted(new int[] {5, 6}, sa)).doesNotContain(5, 6);
    }

    @Test
    void warm_loadsIntoAFreeSlot_soTheFirstRequestFindsItResident() {
        LoraSlots s = slots(2, true);
        s.register("a", "/loras/a");
        CompletableFuture<Void> warmed = s.warm("a");
        assertThat(warmed).isNotDone();
        timer.runAll();
        assertThat(warmed).isCompleted();
        assertThat(s.acquire("a")).isCompleted();
        assertThat(s.stats().loads()).isEqualTo(1);
    }

    /**
     * Random acquisitions, releases and timer runs against invariants kept in one place: never more
     * adapters in slots than slots; an adapter with a held lease stays in its slot; a request waits only when its adapter is not in a slot and no slot is
     * free or idle; every lease handed out completes once its load ran.
     */
    @Test
    void fuzz_invariantsHoldAfterEveryOperation() {
        for (long seed = 1; seed <= 30; seed++) {
            Random rnd = new Random(seed);
            ManualScheduler t = new ManualScheduler();
            int max = 1 + rnd.nextInt(3);
            Map<String, String> pre = new HashMap<>();
            for (int i = 0; i < 6; i++) {
                pre.put("a" + i, "/p" + i);
            }
            LoraSlots s = new LoraSlots(max, 1, false, pre, t);
            List<CompletableFuture<LoraSlots.Lease>> outstanding = new ArrayList<>();
            Map<CompletableFuture<LoraSlots.Lease>, String> adapterOf = new HashMap<>();
            for (int step = 0; step < 3_000; step++) {
                int op = rnd.nextInt(3);
                if (op == 0) {
                    String a = "a" + rnd.nextInt(6);
                    CompletableFuture<LoraSlots.Lease> f = s.acquire(a);
                    outstanding.add(f);
                    adapterOf.put(f, a);
                } else if (op == 1 && !outstanding.isEmpty()) {
                    CompletableFuture<LoraSlots.Lease> f = outstanding.get(rnd.nextInt(outstanding.size()));
                    if (f.isDone()) {
                        outstanding.remove(f);
                        f.join().release();
                    }
                } else {
                    t.runAll();
                }
                LoraSlots.Stats st = s.stats();
                for (CompletableFuture<LoraSlots.Lease> f : outstanding) {
                    if (f.isDone()) { // a held lease keeps its adapter in its slot: never evicted while in use
                        assertThat(st.running()).as("seed " + seed + " step " + step).contains(adapterOf.get(f));
                    }
                }
                assertThat(st.slotsUsed()).as("seed " + seed).isLessThanOrEqualTo(max);
                assertThat(st.running().size()).isLessThanOrEqualTo(max);
                if (!st.waiting().isEmpty() && t.tasks.isEmpty()) {
                    // nothing loading: whoever waits does so because every slot is in use
                    assertThat(st.running()).as("seed " + seed + " step " + step).hasSize(max);
                }
            }
            // drain: release everything, run timers; every request gets its adapter
            for (int round = 0; round < 100 && !outstanding.isEmpty(); round++) {
                t.runAll();
                for (CompletableFuture<LoraSlots.Lease> f : new ArrayList<>(outstanding)) {
                    if (f.isDone()) {
                        outstanding.remove(f);
                        f.join().release();
                    }
                }
            }
            assertThat(outstanding).as("seed " + seed).isEmpty();
            assertThat(s.stats().running()).isEmpty();
        }
    }
}
