package io.kvroute.router.discovery;

import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.ToIntFunction;

/**
 * Pod facts in, registry actions out: the pure core of Kubernetes discovery (no fabric8 types, no
 * I/O, time passed in).
 *
 * <p>Level-based, not edge-based: every {@link #plan} compares the whole desired set (each known
 * pod through {@link DiscoveryRules}) with the whole current fleet, so the order and speed of pod
 * events cannot leave a ghost (a routable worker no Ready pod asks for): whatever the history, the
 * plan after the last event converges on the pods' present state. Transitions:
 * <ul>
 *   <li>desired, absent: {@code Add}; desired, draining: {@code Resume}; desired with another role
 *       or an annotated bootstrap port that differs: {@code Update}; desired with other KV-event
 *       endpoints than the worker's template-given ones (the pod's {@code --kv-events-annotation}
 *       added, edited, removed or no longer parsing): {@code KvEvents}, so the worker keeps serving
 *       while its subscription follows the pod. A worker whose {@code /server_info} advertised its
 *       endpoints keeps them (they win over any template).</li>
 *   <li>owned, not desired: {@code Drain} (no new requests; in-flight ones finish), then
 *       {@code Remove} on a later plan once it has nothing in flight or its drain has lasted
 *       {@code drainTimeoutNanos}. Two steps, so a request that picked the worker from the last
 *       snapshot still finds it registered.</li>
 * </ul>
 * Only workers this reconciler added (or adopted: a desired URL already registered) are drained or
 * removed; a worker added through the admin API for a URL no pod names is left alone. Two pods
 * naming one URL (a reused IP) resolve to the pod whose key sorts first.
 *
 * <p>Threading: not thread-safe; the adapter calls every method from one serial executor. The
 * plan assumes its actions are applied before the next call.
 */
public final class FleetReconciler {

    private final DiscoveryRules rules;
    private final long drainTimeoutNanos;
    /** Every known pod by key, sorted so URL conflicts resolve the same way on every replica. */
    private final Map<String, PodFacts> podsByKey = new TreeMap<>();
    /** Workers this reconciler manages. */
    private final Set<String> ownedIds = new HashSet<>();
    /** When each owned, undesired worker started draining. */
    private final Map<String, Long> drainingSinceNanos = new HashMap<>();

    public FleetReconciler(DiscoveryRules rules, long drainTimeoutNanos) {
        this.rules = Objects.requireNonNull(rules, "rules");
        if (drainTimeoutNanos < 0) {
            throw new IllegalArgumentException("drainTimeoutNanos must be >= 0, got " + drainTimeoutNanos);
        }
        this.drainTimeoutNanos = drainTimeoutNanos;
    }

    /** A pod appeared or changed (also a resync replay of an unchanged pod). */
    public void upsert(PodFacts pod) {
        podsByKey.put(pod.key(), pod);
    }

    /** A pod is gone. */
    public void delete(String podKey) {
        podsByKey.remove(podKey);
    }

    public int knownPods() {
        return podsByKey.size();
    }

    /** The workers the known pods ask for, by worker id. */
    public Map<String, DesiredWorker> desired() {
        Map<String, DesiredWorker> byId = new LinkedHashMap<>();
        for (PodFacts pod : podsByKey.values()) {
            DesiredWorker wanted = rules.classify(pod);
            if (wanted != null) {
                byId.putIfAbsent(wanted.workerId(), wanted);
            }
        }
        return byId;
    }

    /**
     * The actions that move {@code fleet} towards the desired set.
     *
     * @param inFlight router-local requests in flight per worker id
     */
    public List<ReconcileAction> plan(WorkerRegistry.Fleet fleet, ToIntFunction<String> inFlight, long nowNanos) {
        Map<String, DesiredWorker> desired = desired();
        List<ReconcileAction> actions = new ArrayList<>();
        for (Map.Entry<String, DesiredWorker> entry : desired.entrySet()) {
            String id = entry.getKey();
            DesiredWorker wanted = entry.getValue();
            Worker have = fleet.workers().get(id);
            ownedIds.add(id);
            drainingSinceNanos.remove(id);
            if (have == null) {
                actions.add(new ReconcileAction.Add(wanted.toWorker()));
                continue;
            }
            if (fleet.isDraining(id)) {
                actions.add(new ReconcileAction.Resume(id));
            }
            boolean roleChanged = have.role() != wanted.role();
            boolean portChanged = wanted.bootstrapPort() != null && !wanted.bootstrapPort().equals(have.bootstrapPort());
            if (roleChanged || portChanged) {
                actions.add(new ReconcileAction.Update(id, wanted.role(), wanted.bootstrapPort()));
            }
            if (!have.kvEventsFromServerInfo() && !Objects.equals(have.kvEvents(), wanted.kvEvents())) {
                actions.add(new ReconcileAction.KvEvents(id, wanted.kvEvents()));
            }
        }
        for (String id : new ArrayList<>(ownedIds)) {
            if (desired.containsKey(id)) {
                continue;
            }
            if (!fleet.workers().containsKey(id)) { // removed behind our back (admin API)
                ownedIds.remove(id);
                drainingSinceNanos.remove(id);
                continue;
            }
            Long since = drainingSinceNanos.get(id);
            if (since == null || !fleet.isDraining(id)) {
                actions.add(new ReconcileAction.Drain(id));
                drainingSinceNanos.putIfAbsent(id, nowNanos);
            } else if (inFlight.applyAsInt(id) == 0 || nowNanos - since >= drainTimeoutNanos) {
                actions.add(new ReconcileAction.Remove(id));
                ownedIds.remove(id);
                drainingSinceNanos.remove(id);
            }
        }
        return actions;
    }

    /** Workers being drained because no pod asks for them any more. */
    public int drainingWorkers() {
        return drainingSinceNanos.size();
    }
}
