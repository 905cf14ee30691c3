package io.kvroute.mock.lora;

import static java.util.Objects.requireNonNull;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The mock engine's LoRA adapters: a registry of served adapters (name to path) and {@code maxLoras} GPU
 * slots, modelled on vLLM: adapters named at start ({@code --lora-modules}) or loaded at runtime are served
 * (listed in {@code /v1/models}); a request for one needs it in a slot. A resident adapter serves at once;
 * one that is not is loaded into a free slot, or into the slot of the least recently used idle adapter
 * (evicting it), taking {@code loadNanos}; when every slot holds an adapter with requests in flight the
 * request waits, first come first served (vLLM {@code vllm/lora/worker_manager.py},
 * {@code LRUCacheWorkerLoRAManager}; vLLM's scheduler defers such requests, {@code vllm/v1/core/sched/scheduler.py}).
 * A request for an adapter that is not served fails with {@link NotServed} unless runtime updating is on,
 * when its name is taken as its path and it is registered, as vLLM resolves unknown adapters then
 * ({@code vllm/entrypoints/openai/models/serving.py}, {@code resolve_lora}).
 *
 * <p>Each served adapter gets a cache salt (its registration number in the high bits of a token id), so
 * the engine's prefix cache, keyed by token ids, never shares pages between adapters, or between an
 * adapter and the base model, as vLLM's block hashes include the adapter. {@link #unsalted} takes a stored
 * page chain back to the adapter and its real token ids, which is what vLLM's KV events report.
 *
 * <p>Threading: all state is guarded by this object's monitor; futures are completed and loads scheduled
 * after the monitor is released. Time comes from the injected {@link Scheduler}.
 */
public final class LoraSlots {

    /** Runs a task after a delay (the worker's timer thread; tests run them by hand). */
    public interface Scheduler {
        void schedule(Runnable task, long delayNanos);
    }

    /** The request's adapter is not served here (vLLM answers 404 "The model ... does not exist."). */
    public static final class NotServed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotServed(String adapter) {
            super("The model `" + adapter + "` does not exist.", null, false, false);
        }
    }

    /** A request's hold on a resident adapter; {@link #release} exactly once when the request ends. */
    public final class Lease {
        private final Slot slot;
        private boolean released; // guarded by LoraSlots.this

        private Lease(Slot slot) {
            this.slot = slot;
        }

        /** The adapter's cache salt, to be XORed into the request's token ids. */
        public int cacheSalt() {
            return slot.salt;
        }

        public void release() {
            LoraSlots.this.release(this);
        }
    }

    /** Counters and lists for {@code /metrics}. */
    public record Stats(Set<String> running, Set<String> waiting, int maxLoras, int slotsUsed, long loads,
                        long evictions) {}

    /** Largest number of adapters one worker serves: the cache salt has 11 bits. */
    public static final int MAX_ADAPTERS = 2047;
    private static final int SALT_SHIFT = 20;

    private final int maxLoras;
    private final long loadNanos;
    private final boolean runtimeUpdating;
    private final Scheduler scheduler;
    /** Served adapters: name to path, in registration order (guarded by this). */
    private final Map<String, String> served = new LinkedHashMap<>();
    private final Map<String, Integer> salts = new LinkedHashMap<>();
    private int nextSalt = 1;
    /** Registration number to name, every adapter ever served (an immutable snapshot, replaced on register). */
    private volatile Map<Integer, String> namesBySalt = Map.of();
    /** Adapters in GPU slots, least recently used first (access order; guarded by this). */
    private final LinkedHashMap<String, Slot> slots = new LinkedHashMap<>(16, 0.75f, true);
    private final Deque<Waiter> waiters = new ArrayDeque<>();
    private long loads;
    private long evictions;

    private static final class Slot {
        final String name;
        final int salt;
        boolean ready;
        int active;
        final List<CompletableFuture<Lease>> onReady = new ArrayList<>();

        Slot(String name, int salt) {
            this.name = name;
            this.salt = salt;
        }
    }

    private record Waiter(String adapter, CompletableFuture<Lease> lease) {}

    public LoraSlots(int maxLoras, long loadNanos, boolean runtimeUpdating, Map<String, String> preloaded,
            Scheduler scheduler) {
        if (maxLoras < 1 || loadNanos < 0) {
            throw new IllegalArgumentException("max-loras must be >= 1 and the load latency >= 0");
        }
        this.maxLoras = maxLoras;
        this.loadNanos = loadNanos;
        this.runtimeUpdating = runtimeUpdating;
        this.scheduler = requireNonNull(scheduler, "scheduler");
        preloaded.forEach(this::register);
    }

    public boolean runtimeUpdating() {
        return runtimeUpdating;
    }

    /** Served adapters, name to path, in registration order. */
    public synchronized Map<String, String> served() {
        return new LinkedHashMap<>(served);
    }

    /** Adds an adapter to the served ones (no slot yet); false when it already was. */
    public synchronized boolean register(String name, String path) {
        if (served.containsKey(name)) {
            return false;
        }
        if (served.size() >= MAX_ADAPTERS) {
            throw new IllegalStateException("at most " + MAX_ADAPTERS + " adapters per worker");
        }
        served.put(name, path);
        if (!salts.containsKey(name)) {
            salts.put(name, nextSalt++);
            Map<Integer, String> names = new java.util.HashMap<>(namesBySalt);
            names.put(salts.get(name), name);
            namesBySalt = Map.copyOf(names);
        }
        return true;
    }

    /**
     * A page chain of an adapter's request as vLLM reports it in a KV event: the adapter's number (vLLM's
     * {@code lora_request.adapter_id}), its name and the real, unsalted token ids.
     */
    public record AdapterPages(int loraId, String loraName, int[] tokenIds) {}

    /**
     * The adapter whose salt {@code cacheTokens} (a stored chain, as the prefix cache holds it) carry, with the
     * unsalted ids; null for the base model's pages (no salt), or when the ids carry no single known salt. Any
     * thread: reads an immutable snapshot.
     */
    public AdapterPages unsalted(int[] cacheTokens) {
        if (cacheTokens.length == 0) {
            return null;
        }
        int number = cacheTokens[0] >>> SALT_SHIFT;
        String name = namesBySalt.get(number);
        if (number == 0 || name == null) {
            return null;
        }
        int[] ids = new int[cacheTokens.length];
        for (int i = 0; i < ids.length; i++) {
            if (cacheTokens[i] >>> SALT_SHIFT != number) {
                return null; // not one adapter's chain (a base-model id above 2^20): report it as it is
            }
            ids[i] = cacheTokens[i] & ((1 << SALT_SHIFT) - 1);
        }
        return new AdapterPages(number, name, ids);
    }

    /**
     * Stops serving an adapter: false when it was not served. Its slot is freed at once when idle, else when
     * its last request ends; queued requests for it fail with {@link NotServed}.
     */
    public boolean unregister(String name) {
        List<CompletableFuture<Lease>> failed = new ArrayList<>();
        synchronized (this) {
            if (served.remove(name) == null) {
                return false;
            }
            Slot s = slots.get(name);
            if (s != null && s.active == 0 && s.ready) {
                slots.remove(name);
            }
            for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
                Waiter w = it.next();
                if (w.adapter.equals(name)) {
                    failed.add(w.lease);
                    it.remove();
                }
            }
        }
        failed.forEach(f -> f.completeExceptionally(new NotServed(name)));
        drain();
        return true;
    }

    /** A lease on {@code adapter} once it is resident; fails with {@link NotServed} when it is not served. */
    public CompletableFuture<Lease> acquire(String adapter) {
        CompletableFuture<Lease> lease = new CompletableFuture<>();
        Runnable after;
        synchronized (this) {
            if (!served.containsKey(adapter)) {
                if (!runtimeUpdating) {
                    return CompletableFuture.failedFuture(new NotServed(adapter));
                }
                register(adapter, adapter);
            }
            after = placeLocked(adapter, lease);
            if (after == null && !lease.isDone()) {
                waiters.addLast(new Waiter(adapter, lease));
            }
        }
        if (after != null) {
            after.run();
        }
        return lease;
    }

    /**
     * Loads a served adapter into a slot now if one is free or idle (as vLLM's {@code load_lora_adapter}
     * activates it when there is room), taking the load latency; completes once loaded, or after the
     * latency alone when every slot is busy (the adapter is served, and loaded on its first request).
     */
    public CompletableFuture<Void> warm(String adapter) {
        CompletableFuture<Lease> lease = new CompletableFuture<>();
        Runnable after;
        synchronized (this) {
            if (!served.containsKey(adapter)) {
                return CompletableFuture.failedFuture(new NotServed(adapter));
            }
            after = placeLocked(adapter, lease);
        }
        if (after == null && !lease.isDone()) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            scheduler.schedule(() -> done.complete(null), loadNanos);
            return done;
        }
        if (after != null) {
            after.run();
        }
        return lease.thenAccept(Lease::release);
    }

    /**
     * Tries to give {@code lease} a slot (guarded by this). Returns the work to run after unlocking (a load to
     * schedule or a lease to complete), or null when it must wait.
     */
    private Runnable placeLocked(String adapter, CompletableFuture<Lease> lease) {
        Slot slot = slots.get(adapter); // access-ordered: a hit makes it most recently used
        if (slot != null) {
            slot.active++;
            if (slot.ready) {
                Lease l = new Lease(slot);
                return () -> lease.complete(l);
            }
            slot.onReady.add(lease);
            return () -> { };
        }
        if (slots.size() >= maxLoras && !evictIdleLocked()) {
            return null;
        }
        Slot fresh = new Slot(adapter, salts.get(adapter) << SALT_SHIFT);
        fresh.active = 1;
        fresh.onReady.add(lease);
        slots.put(adapter, fresh);
        loads++;
        return () -> scheduler.schedule(() -> loaded(fresh), loadNanos);
    }

    /** Evicts the least recently used idle resident adapter (guarded by this); false when none is idle. */
    private boolean evictIdleLocked() {
        for (Iterator<Slot> it = slots.values().iterator(); it.hasNext(); ) {
            Slot s = it.next();
            if (s.ready && s.active == 0) {
                it.remove();
                evictions++;
                return true;
            }
        }
        return false;
    }

    private void loaded(Slot slot) {
        List<CompletableFuture<Lease>> ready;
        List<Lease> leases = new ArrayList<>();
        synchronized (this) {
            slot.ready = true;
            ready = new ArrayList<>(slot.onReady);
            slot.onReady.clear();
            for (int i = 0; i < ready.size(); i++) {
                leases.add(new Lease(slot));
            }
        }
        for (int i = 0; i < ready.size(); i++) {
            ready.get(i).complete(leases.get(i));
        }
    }

    private void release(Lease lease) {
        synchronized (this) {
            if (lease.released) {
                return;
            }
            lease.released = true;
            Slot s = lease.slot;
            s.active--;
            if (s.active == 0 && !served.containsKey(s.name)) {
                slots.remove(s.name); // unregistered while in use: freed with its last request
            }
        }
        drain();
    }

    /** Gives freed slots to waiting requests, first come first served. */
    private void drain() {
        List<Runnable> after = new ArrayList<>();
        synchronized (this) {
            for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
                Waiter w = it.next();
                Runnable r = placeLocked(w.adapter, w.lease);
                if (r == null) {
                    continue; // a later waiter may still fit: its adapter may be resident already
                }
                it.remove();
                after.add(r);
            }
        }
        after.forEach(Runnable::run);
    }

    public synchronized Stats stats() {
        Set<String> running = new LinkedHashSet<>();
        for (Slot s : slots.values()) {
            if (s.ready && s.active > 0) {
                running.add(s.name);
            }
        }
        Set<String> waiting = new LinkedHashSet<>();
        for (Slot s : slots.values()) {
            if (!s.ready) {
                waiting.add(s.name);
            }
        }
        for (Waiter w : waiters) {
            waiting.add(w.adapter);
        }
        return new Stats(running, waiting, maxLoras, slots.size(), loads, evictions);
    }

    /** Token ids as the prefix cache sees them under an adapter: its salt in the high bits. */
    public static int[] salted(int[] ids, int salt) {
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = ids[i] ^ salt;
        }
        return out;
    }
}
