package io.kvroute.router.lora;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An immutable picture of the fleet's adapters, captured once per request from {@link AdapterDirectory}.
 *
 * @param byWorker what each worker reports, by worker id (absent = nothing known)
 * @param baseOf the base model of every adapter some worker lists ({@code parent} of its card), by adapter name
 * @param recent per worker id, the adapters this router sent there last, most recent first, at most the
 *     worker's slot count: the router's own estimate of what sits in the worker's adapter slots
 */
public record AdapterView(Map<String, WorkerAdapters> byWorker, Map<String, String> baseOf,
                          Map<String, List<String>> recent) {

    public static final AdapterView EMPTY = new AdapterView(Map.of(), Map.of(), Map.of());

    public AdapterView {
        byWorker = Map.copyOf(byWorker);
        baseOf = Map.copyOf(baseOf);
        recent = Map.copyOf(recent);
    }

    public WorkerAdapters of(String workerId) {
        return byWorker.getOrDefault(workerId, WorkerAdapters.UNKNOWN);
    }

    public List<String> recentOf(String workerId) {
        return recent.getOrDefault(workerId, List.of());
    }

    /** True when the worker lists the adapter among its models. */
    public boolean lists(String workerId, String adapter) {
        return of(workerId).listed().contains(adapter);
    }

    /** Every adapter some worker lists. */
    public Set<String> adapters() {
        return baseOf.keySet();
    }
}
