package io.kvroute.router.lora;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.load.LoraReading;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which worker serves which LoRA adapter, published as an immutable {@link AdapterView}.
 *
 * <p>Three sources feed it. The model list ({@link #updateCards}): a worker's {@code /v1/models} cards whose
 * {@code parent} is its base model are the adapters it serves (vLLM {@code vllm/entrypoints/openai/models/serving.py},
 * SGLang {@code http_server.py}; the vLLM production-stack router reads them the same way,
 * {@code src/vllm_router/service_discovery.py}). The load scrape ({@link #updateLoad}): vLLM's running and
 * waiting adapters and its slot count, SGLang's slot counts. The router itself ({@link #noteDispatch}): vLLM
 * names only the adapters of running requests, so an adapter that finished its burst drops out of the list
 * though it still sits in a GPU slot; the router remembers what it sent each worker, most recent first, capped
 * at the worker's slot count (1 while unknown), as the engine's LRU slot cache keeps it (vLLM
 * {@code vllm/lora/worker_manager.py}, {@code LRUCacheWorkerLoRAManager}). That estimate is the router's own, as
 * the approximate prefix tree is; replicas do not share it.
 *
 * <p>Threading: every write copies the snapshot under a short lock, returns early when nothing changed, and
 * publishes through a volatile field; {@link #current} is lock-free. Nothing is called while the lock is held.
 */
public final class AdapterDirectory {

    private final Object lock = new Object();
    private volatile AdapterView current = AdapterView.EMPTY;
    /** Base model of each worker's listed adapters, by worker id (guarded by lock). */
    private final Map<String, String> baseByWorker = new HashMap<>();

    public AdapterView current() {
        return current;
    }

    /**
     * A worker's model list: {@code base} is the card without a parent, {@code adapters} the ids of the cards
     * whose parent is {@code base}. Replaces what the list said before (an adapter the router loaded there,
     * {@link #noteLoaded}, is in the engine's own list from then on).
     */
    public void updateCards(String workerId, String base, Set<String> adapters) {
        requireNonNull(workerId, "workerId");
        requireNonNull(adapters, "adapters");
        synchronized (lock) {
            AdapterView view = current;
            WorkerAdapters old = view.of(workerId);
            if (old.listed().equals(adapters) && java.util.Objects.equals(baseByWorker.get(workerId), base)) {
                return;
            }
            Map<String, WorkerAdapters> byWorker = new HashMap<>(view.byWorker());
            byWorker.put(workerId, old.withListed(adapters));
            if (base == null) {
                baseByWorker.remove(workerId);
            } else {
                baseByWorker.put(workerId, base);
            }
            current = new AdapterView(byWorker, basesOf(byWorker), view.recent());
        }
    }

    /** The router loaded {@code adapter} onto the worker: it serves it now, whatever its last model list said. */
    public void noteLoaded(String workerId, String adapter, String base) {
        synchronized (lock) {
            AdapterView view = current;
            WorkerAdapters old = view.of(workerId);
            if (old.listed().contains(adapter)) {
                return;
            }
            Set<String> listed = new java.util.HashSet<>(old.listed());
            listed.add(adapter);
            Map<String, WorkerAdapters> byWorker = new HashMap<>(view.byWorker());
            byWorker.put(workerId, old.withListed(listed));
            if (base != null) {
                baseByWorker.putIfAbsent(workerId, base);
            }
            current = new AdapterView(byWorker, basesOf(byWorker), view.recent());
        }
    }

    /** One scrape's LoRA families; null (none in the exposition) leaves the running and waiting lists unknown. */
    public void updateLoad(String workerId, LoraReading reading) {
        requireNonNull(workerId, "workerId");
        synchronized (lock) {
            AdapterView view = current;
            WorkerAdapters old = view.of(workerId);
            WorkerAdapters now = reading == null ? old.withLoad(Set.of(), Set.of(), old.maxLoras(), old.slotsUsed())
                    : old.withLoad(reading.running(), reading.waiting(), reading.maxLoras(), reading.slotsUsed());
            if (now.equals(old)) {
                return;
            }
            Map<String, WorkerAdapters> byWorker = new HashMap<>(view.byWorker());
            byWorker.put(workerId, now);
            current = new AdapterView(byWorker, view.baseOf(), trimmed(view.recent(), workerId, now.maxLoras()));
        }
    }

    /** The router sent a request for {@code adapter} to the worker: it is the worker's most recent adapter now. */
    public void noteDispatch(String workerId, String adapter) {
        requireNonNull(workerId, "workerId");
        requireNonNull(adapter, "adapter");
        synchronized (lock) {
            AdapterView view = current;
            List<String> old = view.recentOf(workerId);
            if (!old.isEmpty() && old.get(0).equals(adapter)) {
                return; // already the most recent: the common case for a hot adapter, no copy
            }
            int cap = Math.max(1, view.of(workerId).maxLoras());
            List<String> now = new ArrayList<>(Math.min(cap, old.size() + 1));
            now.add(adapter);
            for (String a : old) {
                if (now.size() >= cap) {
                    break;
                }
                if (!a.equals(adapter)) {
                    now.add(a);
                }
            }
            Map<String, List<String>> recent = new HashMap<>(view.recent());
            recent.put(workerId, List.copyOf(now));
            current = new AdapterView(view.byWorker(), view.baseOf(), recent);
        }
    }

    /** Forgets a worker that left the fleet. */
    public void removeWorker(String workerId) {
        synchronized (lock) {
            AdapterView view = current;
            if (!view.byWorker().containsKey(workerId) && !view.recent().containsKey(workerId)) {
                return;
            }
            Map<String, WorkerAdapters> byWorker = new HashMap<>(view.byWorker());
            byWorker.remove(workerId);
            baseByWorker.remove(workerId);
            Map<String, List<String>> recent = new HashMap<>(view.recent());
            recent.remove(workerId);
            current = new AdapterView(byWorker, basesOf(byWorker), recent);
        }
    }

    /** Adapter -> base model over every worker's listed adapters (guarded by lock); the first base seen wins. */
    private Map<String, String> basesOf(Map<String, WorkerAdapters> byWorker) {
        Map<String, String> out = new HashMap<>();
        for (Map.Entry<String, WorkerAdapters> e : byWorker.entrySet()) {
            String base = baseByWorker.get(e.getKey());
            if (base == null) {
                continue;
            }
            for (String adapter : e.getValue().listed()) {
                out.putIfAbsent(adapter, base);
            }
        }
        return out;
    }

    /** The worker's recent list cut to a (new) slot count. */
    private static Map<String, List<String>> trimmed(Map<String, List<String>> recent, String workerId, int maxLoras) {
        List<String> list = recent.get(workerId);
        int cap = Math.max(1, maxLoras);
        if (list == null || list.size() <= cap) {
            return recent;
        }
        Map<String, List<String>> out = new HashMap<>(recent);
        out.put(workerId, List.copyOf(list.subList(0, cap)));
        return out;
    }
}
