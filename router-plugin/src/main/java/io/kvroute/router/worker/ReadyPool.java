package io.kvroute.router.worker;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The workers a request may be sent to, per role and model, published as an immutable snapshot that
 * is rebuilt when the fleet or a breaker changes, not re-scanned per request (the {@code fleet-scale}
 * benchmark, docs/benchmarks.md: with 1,016 workers every request paid ~2 µs per worker for a fleet
 * scan and one breaker lock per worker). The
 * model is grpc-java's {@code RoundRobinLoadBalancer}: state changes build a new picker; requests only
 * read the current one.
 *
 * <p>A snapshot holds, per role, the routable workers (healthy, not draining) in registry order, and the
 * ids whose breaker was OPEN when it was built. A prefill worker whose KV bootstrap port is not known yet
 * (configured, annotated, or learned from its {@code /server_info}) is left out: a PD request built for it
 * would carry {@code bootstrap_port: null}, which a decode engine refuses, so it is not a usable pair
 * member until the port is known. {@link Snapshot#eligible} returns the shared list as it
 * is when no breaker is open (the common case: O(1), no allocation after the first request of a model);
 * otherwise it filters out the open ones, asking the breaker itself (a lazy OPEN → HALF_OPEN move is
 * time-based, so only the breaker knows) for those few ids only.
 *
 * <p>Threading: {@link #rebuild} is called from registry and breaker listeners on any thread; it is
 * serialized by a short lock that never calls out, and the result is published through a volatile
 * field. {@link #current} and {@link Snapshot#eligible} are lock-free.
 */
public final class ReadyPool {

    private final Object lock = new Object();
    private final Set<String> configuredModels;
    private volatile Snapshot current;
    private long builtFrom = -1; // guarded by lock: fleet version of the last rebuild
    private long generation; // guarded by lock

    /** A pool with no workers; {@code configuredModels} are always listed as served ({@code --model-ids}). */
    public ReadyPool(Collection<String> configuredModels) {
        this.configuredModels = Set.copyOf(configuredModels);
        this.current = new Snapshot(0, Map.of(), Set.of(), id -> true, new TreeSet<>(this.configuredModels), Map.of());
    }

    public ReadyPool() {
        this(Set.of());
    }

    /** The current snapshot; cheap, lock-free. */
    public Snapshot current() {
        return current;
    }

    /**
     * Rebuilds from the registry's current fleet and the ids of currently open breakers, both read under
     * this pool's lock so that of two racing rebuilds the later one publishes the later state. Cheap to call
     * redundantly: nothing is rebuilt when neither the fleet version nor the open set changed.
     *
     * @param allowsTraffic the breaker's own answer for an id, used at pick time for open ids only
     */
    public void rebuild(Supplier<WorkerRegistry.Fleet> fleetNow, Supplier<Set<String>> openBreakersNow,
            Predicate<String> allowsTraffic) {
        synchronized (lock) {
            WorkerRegistry.Fleet fleet = requireNonNull(fleetNow.get(), "fleet");
            Set<String> open = Set.copyOf(openBreakersNow.get());
            Snapshot now = current;
            if (fleet.version() == builtFrom && now.openBreakers.equals(open)) {
                return;
            }
            Map<WorkerRole, List<Worker>> byRole = new HashMap<>();
            for (Worker worker : fleet.routable()) {
                if (!canServe(worker)) {
                    continue;
                }
                byRole.computeIfAbsent(worker.role(), r -> new ArrayList<>()).add(worker);
            }
            Map<WorkerRole, List<Worker>> frozen = new HashMap<>();
            // List.copyOf, not unmodifiableList: RoutingRequest's own List.copyOf then returns the same instance,
            // so the policy sees one list per snapshot (CandidateIndex keys on it) instead of an O(pool) copy
            byRole.forEach((role, list) -> frozen.put(role, List.copyOf(list)));
            TreeSet<String> models = new TreeSet<>(configuredModels);
            Map<String, String> aliases = new HashMap<>();
            for (Worker worker : fleet.workers().values()) {
                if (worker.modelId() != null) {
                    models.add(worker.modelId());
                    for (String alias : worker.modelAliases()) {
                        aliases.putIfAbsent(alias, worker.modelId());
                    }
                }
            }
            aliases.keySet().removeAll(models); // a name some worker serves as its model is that model
            builtFrom = fleet.version();
            current = new Snapshot(++generation, frozen, open, allowsTraffic, models, aliases);
        }
    }

    /** A prefill worker needs its bootstrap port before it can take part in a PD pair. */
    static boolean canServe(Worker worker) {
        return worker.role() != WorkerRole.PREFILL || worker.bootstrapPort() != null;
    }

    /** One immutable view; {@code generation} grows with every rebuild that changed something. */
    public static final class Snapshot {
        private final long generation;
        private final Map<WorkerRole, List<Worker>> byRole;
        private final Set<String> openBreakers;
        private final Predicate<String> allowsTraffic;
        private final SortedSet<String> models;
        /** Another served name of a model (vLLM {@code --served-model-name a b}) → the model's first name. */
        private final Map<String, String> modelOfAlias;
        /** Models memoized per snapshot at most: ids are resolved against served models before routing. */
        private static final int MAX_MEMO_ENTRIES = 256;
        /** Derived, idempotent memo of byRole filtered by model: filled on first use per (role, model). */
        private final Map<String, List<Worker>> byRoleAndModel = new ConcurrentHashMap<>();

        Snapshot(long generation, Map<WorkerRole, List<Worker>> byRole, Set<String> openBreakers,
                Predicate<String> allowsTraffic, SortedSet<String> models, Map<String, String> modelOfAlias) {
            this.generation = generation;
            this.modelOfAlias = Map.copyOf(modelOfAlias);
            this.models = Collections.unmodifiableSortedSet(models);
            this.byRole = Map.copyOf(byRole);
            this.openBreakers = openBreakers;
            this.allowsTraffic = allowsTraffic;
        }

        public long generation() {
            return generation;
        }

        /**
         * Routable workers of {@code role} serving {@code model} whose breaker allows traffic, in registry
         * order. The returned list is shared and unmodifiable.
         */
        public List<Worker> eligible(WorkerRole role, String model) {
            String key = role.name() + '\u0000' + model;
            List<Worker> base = byRoleAndModel.get(key);
            if (base == null) {
                base = serving(role, model);
                if (byRoleAndModel.size() < MAX_MEMO_ENTRIES) {
                    byRoleAndModel.putIfAbsent(key, base);
                }
            }
            if (openBreakers.isEmpty()) {
                return base;
            }
            List<Worker> out = new ArrayList<>(base.size());
            for (Worker w : base) {
                if (!openBreakers.contains(w.id()) || allowsTraffic.test(w.id())) {
                    out.add(w);
                }
            }
            return List.copyOf(out);
        }

        private List<Worker> serving(WorkerRole role, String model) {
            List<Worker> all = byRole.getOrDefault(role, List.of());
            List<Worker> serving = new ArrayList<>(all.size());
            for (Worker w : all) {
                if (w.serves(model)) {
                    serving.add(w);
                }
            }
            return serving.size() == all.size() ? all : List.copyOf(serving);
        }

        /** Served model ids: the configured ones plus those any fleet worker reports (routable or not), sorted. */
        public SortedSet<String> models() {
            return models;
        }

        /**
         * The model {@code requested} names: itself, or for another served name of a model (a worker that
         * lists several base cards) that model's first name, so requests under either name share one pool,
         * one prefix tree and one label. Null stays null.
         */
        /** Every other served name of a model → the model's first name (see {@link #canonicalModel}). */
        public Map<String, String> modelAliases() {
            return modelOfAlias;
        }

        public String canonicalModel(String requested) {
            return requested == null ? null : modelOfAlias.getOrDefault(requested, requested);
        }

        /**
         * True when some request could be served now: a regular worker, or a prefill and a decode worker (the
         * usable PD pair), each with its breaker allowing traffic. What {@code /readyz} answers.
         */
        public boolean canServeSomething() {
            if (!eligible(WorkerRole.REGULAR, null).isEmpty()) {
                return true;
            }
            return !eligible(WorkerRole.PREFILL, null).isEmpty() && !eligible(WorkerRole.DECODE, null).isEmpty();
        }

        /** How many routable workers pass their breaker now. */
        public int usableCount() {
            int n = 0;
            for (WorkerRole role : byRole.keySet()) {
                n += eligible(role, null).size();
            }
            return n;
        }

        /** Ids whose breaker was open at the rebuild. */
        public Set<String> openBreakers() {
            return openBreakers;
        }

        /** Every routable worker of every role (for admin views and tests). */
        public List<Worker> all() {
            List<Worker> out = new ArrayList<>();
            byRole.values().forEach(out::addAll);
            return out;
        }

        /** Ids of every routable worker. */
        public Set<String> ids() {
            Set<String> out = new HashSet<>();
            byRole.values().forEach(l -> l.forEach(w -> out.add(w.id())));
            return out;
        }
    }
}
