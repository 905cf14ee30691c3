package io.kvroute.router.lora;

/**
 * How well a worker suits a request for one adapter, as llm-d's {@code lora-affinity-scorer} scores it (llm-d
 * {@code pkg/epp/framework/plugins/scheduling/scorer/loraaffinity/lora_affinity.go}), the cases checked in
 * this order:
 * <ol>
 *   <li>{@link #RESIDENT} 1.0: the adapter is running there (vLLM's running list), or the router sent it
 *       there last among the worker's slot count of adapters ({@link AdapterDirectory#noteDispatch}).</li>
 *   <li>{@link #FREE_SLOT} 0.8: the worker has room to load it: fewer adapters in its slots than slots.
 *       vLLM: running, waiting and the router's recent adapters together (llm-d counts running and
 *       waiting only; an idle adapter the router sent there still holds its slot until the engine's LRU
 *       evicts it, and loading another adapter then evicts it, so only a truly free slot counts);
 *       SGLang: used slots.</li>
 *   <li>{@link #WAITING} 0.6: requests for the adapter wait there (it will be loaded when a slot frees).</li>
 *   <li>{@link #NONE} 0: loading it means evicting another adapter, or nothing is known.</li>
 * </ol>
 * The order matters as in llm-d: a waiting adapter on a worker with room scores 0.8. Pure and stateless.
 */
public final class AdapterAffinity {
    public static final double RESIDENT = 1.0;
    public static final double FREE_SLOT = 0.8;
    public static final double WAITING = 0.6;
    public static final double NONE = 0.0;

    private AdapterAffinity() {}

    public static double score(AdapterView view, String workerId, String adapter) {
        WorkerAdapters w = view.of(workerId);
        if (w.running().contains(adapter) || view.recentOf(workerId).contains(adapter)) {
            return RESIDENT;
        }
        if (hasRoom(w, view.recentOf(workerId))) {
            return FREE_SLOT;
        }
        return w.waiting().contains(adapter) ? WAITING : NONE;
    }

    /** Fewer adapters in slots than slots; false while the slot count is unknown. */
    static boolean hasRoom(WorkerAdapters w, java.util.List<String> recent) {
        if (w.maxLoras() <= 0) {
            return false;
        }
        if (w.slotsUsed() >= 0) {
            return w.slotsUsed() < w.maxLoras();
        }
        java.util.Set<String> inSlots = new java.util.HashSet<>(w.running());
        inSlots.addAll(w.waiting());
        inSlots.addAll(recent);
        return inSlots.size() < w.maxLoras();
    }

    /** The decision-metric label of a score: resident, loaded (a free slot), waiting, or miss (an eviction). */
    public static String outcome(double score) {
        if (score >= RESIDENT) {
            return "resident";
        }
        if (score >= FREE_SLOT) {
            return "loaded";
        }
        return score >= WAITING ? "waiting" : "miss";
    }
}
