package io.kvroute.router.lora;

/**
 * How well a worker suits a request for one adapter, as llm-d's {@code lora-affinity-scorer} scores it (llm-d
 * {@code pkg/epp/framework/plugins/scheduling/scorer/loraaffinity/lora_affinity.go}), the cases checked in
 * this order:
 * <ol>
 *   <li>{@link #RESIDENT} 1.0: the adapter is running there (vLLM's running list), or the router sent it
 *       there last among the worker's slot count of adapters ({@link AdapterDirectory#noteDispatch}).</li>
 *   <li>{@link #FREE_SLOT} 0.8: the worker has room to load it: fewer running and waiting adapters than
 *       slots (vLLM), or fewer used slots than slots (SGLang).</li>
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
        if (hasRoom(w)) {
            return FREE_SLOT;
        }
        return w.waiting().contains(adapter) ? WAITING : NONE;
    }

    /** Fewer adapters in use than slots; false while the slot count is unknown. */
    static boolean hasRoom(WorkerAdapters w) {
        if (w.maxLoras() <= 0) {
            return false;
        }
        if (w.slotsUsed() >= 0) {
            return w.slotsUsed() < w.maxLoras();
        }
        int inUse = w.running().size();
        for (String a : w.waiting()) {
            if (!w.running().contains(a)) {
                inUse++;
            }
        }
        return inUse < w.maxLoras();
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
