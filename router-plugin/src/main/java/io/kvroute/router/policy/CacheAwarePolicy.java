package io.kvroute.router.policy;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.PrefillPressure;
import io.kvroute.router.load.WorkerLoad;
import io.kvroute.router.lora.AdapterPlacement;
import io.kvroute.router.lora.AdapterView;
import io.kvroute.router.prefix.PrefixIndex;
import io.kvroute.router.prefix.PrefixIndexConfig;
import io.kvroute.router.prefix.PrefixMatch;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --policy cache_aware}: prefix affinity through an admission ladder (the experimental SGLang
 * router's {@code resolve_cache_candidates}, {@code experimental/sgl-router/src/policies/admission.rs},
 * plus kvroute's saturation pin: when every worker is saturated, stay on the prefix holder).
 *
 * <p>The ladder, first exit wins (docs/routing.md draws it):
 * <ol>
 *   <li>One {@link PrefixIndex#match} (never two per request). Owners = routable workers holding at
 *       least {@code minMatchedTokens} (and {@code minMatchRatio}); ordered by matched tokens desc,
 *       prefill pressure, worker id; capped at {@link CacheAwareConfig#candidateCap}. With an
 *       {@link ExactPrefixSource} ({@code --cache-index exact|auto}), a worker whose engine KV events
 *       are live takes its matched tokens from that index instead of the tree; the decision's
 *       {@code matchIndex} says which index gave the selected worker's match. One exception in
 *       {@code auto}: an engine publishes a prompt's blocks only once it has computed them, so the
 *       next turn of a conversation that arrives while the previous one is still queued or
 *       prefilling finds nothing in the exact index. When a worker's exact answer is too small to make
 *       it a cache candidate but the tree's claim is not, and the router dispatched that prefix there
 *       within the in-flight grace ({@code --cache-index-inflight-grace-ms}), the tree's claim stands
 *       for that worker. An exact answer that passes the threshold always stands (it is the engine's
 *       own truth; the tree's extra tokens would be the tail still in flight).</li>
 *   <li>Queue gate (fail open), then hard admission (fail open) per owner.</li>
 *   <li>Tournament over the admitted owners: least uncached work first, a rival within the switch
 *       margin wins only when materially less pressured.</li>
 *   <li>Nothing admitted but some owner gate-rejected: the saturation pin when a floor is set
 *       (fleet scan fails closed), else the fleet-saturation tier.</li>
 *   <li>Min-load choices over the gate-admitted pool, or the whole pool when everyone queues.</li>
 * </ol>
 *
 * <p>Concurrency: {@link #select} is thread-safe and lock-free apart from the index's own walk
 * lock; everything it reads is the request's immutable snapshot. The index is updated only by
 * {@link #recordDispatch}, which the dispatch calls once the chosen worker has accepted the request
 * (its first 2xx status line), so a request that never reached its worker, or that the worker refused,
 * leaves no trace.
 */
public final class CacheAwarePolicy implements RoutingPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(CacheAwarePolicy.class);
    /** One gate-blind warning is logged per this many gate-blind decisions (upstream's throttle). */
    static final int GATE_BLIND_LOG_SAMPLE = 64;

    private final CacheAwareConfig config;
    /** One index per key kind ({@link CacheKey#TOKENS}, ...), null for kinds the key mode never uses. */
    private final PrefixIndex[] indexes;
    private final MinLoadChoicesPolicy fallback;
    private final AtomicLong gateBlindDecisions = new AtomicLong();
    private final CandidateIndex candidates = new CandidateIndex();
    /** The engines' KV-event index ({@code --cache-index exact|auto}), or null; set once at startup. */
    private volatile ExactPrefixSource exact;
    /** {@code --cache-index exact}: workers the exact index cannot answer for count as holding nothing. */
    private volatile boolean exactOnly;
    /** Tree claims younger than this many ticks outrank a smaller exact answer (in flight); 0 = never. */
    private volatile long inflightGraceTicks;
    /** The prefix indexes' clock, also the in-flight grace's. */
    private final LongSupplier ticks;
    /** The fleet's adapters ({@code --lora-affinity-weight} > 0), or null: adapter requests place as any other. */
    private volatile Supplier<AdapterView> adapterViews;
    private volatile double adapterWeightRequests;
    /** Per-thread randomness for adapter placement ties. */
    private final Supplier<RandomGenerator> random;

    /**
     * @param ticks the prefix index's LRU clock (monotone, e.g. milliseconds)
     * @param random per-thread randomness for the min-load fallback
     */
    public CacheAwarePolicy(CacheAwareConfig config, int minLoadChoices, Supplier<RandomGenerator> random,
                            LongSupplier ticks) {
        this(config, minLoadChoices, random, ticks, PrefixIndexConfig.defaultMaxBytes());
    }

    /**
     * @param maxIndexBytes the global memory bound of all this policy's prefix indexes together
     *     ({@code --cache-max-index-bytes}), split evenly over the key kinds its key mode uses
     */
    public CacheAwarePolicy(CacheAwareConfig config, int minLoadChoices, Supplier<RandomGenerator> random,
                            LongSupplier ticks, long maxIndexBytes) {
        this.config = requireNonNull(config, "config");
        this.ticks = requireNonNull(ticks, "ticks");
        boolean[] used = CacheKey.modesUsed(config.keyMode());
        int kinds = 0;
        for (boolean u : used) {
            kinds += u ? 1 : 0;
        }
        long bytesPerIndex = Math.max(1, maxIndexBytes / Math.max(1, kinds));
        this.indexes = new PrefixIndex[used.length];
        for (int mode = 0; mode < used.length; mode++) {
            if (used[mode]) {
                indexes[mode] = new PrefixIndex(new PrefixIndexConfig(config.maxTreeSizeElements(),
                        PrefixIndexConfig.DEFAULT_MAX_NODES, bytesPerIndex), ticks);
            }
        }
        this.fallback = new MinLoadChoicesPolicy("cache_aware", minLoadChoices, random);
        this.random = random;
    }

    @Override
    public String name() {
        return "cache_aware";
    }

    @Override
    public boolean needsTokens() {
        return true;
    }

    /**
     * The policy's indexes by key kind ({@code tokens}, {@code chars}, {@code sampled}; only the
     * kinds its key mode uses): bind their {@code stats()} to metrics. Each kind has its own tree
     * and its own per-worker capacity, in its own unit.
     */
    public Map<String, PrefixIndex> prefixIndexes() {
        Map<String, PrefixIndex> out = new java.util.LinkedHashMap<>();
        for (int mode = 0; mode < indexes.length; mode++) {
            if (indexes[mode] != null) {
                out.put(CacheKey.MODE_NAMES[mode], indexes[mode]);
            }
        }
        return java.util.Collections.unmodifiableMap(out);
    }

    /** Forgets a worker that left the fleet in every index. */
    public void removeWorker(String workerId) {
        for (PrefixIndex index : indexes) {
            if (index != null) {
                index.removeWorker(workerId);
            }
        }
    }

    /** The index that holds keys of {@code key}'s kind. */
    PrefixIndex indexFor(CacheKey key) {
        return indexes[key.mode];
    }

    public CacheAwareConfig config() {
        return config;
    }

    /** Decisions so far that found the queue gate blind (set, but no routable worker fresh). */
    public long gateBlindDecisions() {
        return gateBlindDecisions.get();
    }

    /**
     * Takes matched tokens from {@code source} for the workers it answers for (engine KV events)
     * instead of from the prefix tree; with {@code exactOnly} the tree is not asked at all. The
     * ladder itself is unchanged.
     */
    public void useExactIndex(ExactPrefixSource source, boolean exactOnly) {
        useExactIndex(source, exactOnly, 0);
    }

    /**
     * As above; in {@code auto} ({@code !exactOnly}) a worker's tree claim recorded within
     * {@code inflightGraceTicks} of the index clock (the router dispatched that prefix there so recently
     * that the engine may not have published its blocks yet) outranks a smaller exact answer.
     */
    public void useExactIndex(ExactPrefixSource source, boolean exactOnly, long inflightGraceTicks) {
        if (inflightGraceTicks < 0) {
            throw new IllegalArgumentException("inflightGraceTicks must be >= 0: " + inflightGraceTicks);
        }
        this.exact = requireNonNull(source, "source");
        this.exactOnly = exactOnly;
        this.inflightGraceTicks = inflightGraceTicks;
    }

    /**
     * Places adapter requests that no worker holds the prefix of by adapter affinity and load
     * ({@link AdapterPlacement}) instead of by min-load choices: the cache ladder still runs first, so a
     * prefix holder (which ran the adapter, since adapter keys are scoped) keeps its requests. A weight of 0
     * turns it off.
     */
    public void useAdapterPlacement(Supplier<AdapterView> views, double weightRequests) {
        if (!(weightRequests >= 0)) {
            throw new IllegalArgumentException("weightRequests must be >= 0: " + weightRequests);
        }
        this.adapterWeightRequests = weightRequests;
        this.adapterViews = weightRequests > 0 ? requireNonNull(views, "views") : null;
    }

    /**
     * After the chosen worker accepted the request: records that it now holds the request's prefix,
     * reusing the decision's match walk. A no-op for decisions without a match.
     */
    public void recordDispatch(Decision decision) {
        CacheAwareDetail detail = decision.cacheAware();
        if (detail != null && detail.prefixMatch() != null) {
            for (PrefixIndex index : indexes) {
                if (index != null && index.produced(detail.prefixMatch())) {
                    index.insertMatched(detail.prefixMatch(), decision.worker().id());
                }
            }
        }
    }

    /** A cache candidate: a routable worker with enough of the prefix. */
    private record Owner(Worker worker, long matchedTokens, long uncachedTokens) {
        String id() {
            return worker.id();
        }
    }

    /**
     * {@code exact} without the workers whose exact answer is below the candidate threshold while their
     * tree claim, younger than the in-flight grace, passes it: the tree answers for them (the same map
     * when there are none: the usual case costs one tick compare per tree owner).
     */
    private Map<String, Long> withInflightClaims(Map<String, Long> exact, PrefixMatch match, CacheKey key) {
        long grace = inflightGraceTicks;
        if (grace <= 0 || match.ownerCount() == 0) {
            return exact;
        }
        long now = ticks.getAsLong();
        long threshold = Math.max(1, config.minMatchedTokens());
        Map<String, Long> adjusted = exact;
        for (int i = 0; i < match.ownerCount(); i++) {
            if (now - match.tickAt(i) > grace || key.nothingMatched(match.lengthAt(i))) {
                continue;
            }
            String id = match.ownerAt(i);
            Long exactAnswer = adjusted.get(id);
            if (exactAnswer != null && exactAnswer < threshold && key.toTokens(match.lengthAt(i)) >= threshold) {
                if (adjusted == exact) {
                    adjusted = new HashMap<>(exact);
                }
                adjusted.remove(id);
            }
        }
        return adjusted;
    }

    @Override
    public Decision select(RoutingRequest request) {
        List<Worker> pool = request.candidates();
        EngineLoadSnapshot loads = request.loads();
        CacheKey key = CacheKey.of(request, config);
        boolean exactIndexOnly = exactOnly; // read once
        // exact-only: the tree is neither asked nor, since the decision carries no match, built by recordDispatch
        PrefixMatch match = key == null || exactIndexOnly ? null : indexFor(key).match(key.key);
        ExactPrefixSource exactSource = exact;
        Map<String, Long> exactTokens = exactSource == null || request.tokenIds() == null ? Map.of()
                : EngineTokenIds.matchedTokens(exactSource, pool, request.tokenIds(), request.engineTokenIds(),
                        request.adapter(), request.extras());
        if (!exactTokens.isEmpty() && match != null && key != null) {
            exactTokens = withInflightClaims(exactTokens, match, key);
        }
        // Walk the answers, not the pool: the exact index answers per worker it knows, and the tree's match lists
        // its owners. An exact answer, 0 included, is the engine's own truth and overrides the tree for that
        // worker. Per tree owner the walk costs a length compare; only owners that pass the match thresholds are
        // looked up in the pool (fleet-scale bench: with 1,024 workers owning one short prompt, a per-owner map entry for
        // every owner was half of the router's CPU, and most of those owners never become candidates).
        Map<String, Worker> poolById = candidates.of(pool);
        Set<String> exactlyMatched = exactTokens.isEmpty() ? Set.of() : new HashSet<>(2 * exactTokens.size());
        long bestMatched = 0;
        List<Owner> owners = new ArrayList<>();
        for (Map.Entry<String, Long> e : exactTokens.entrySet()) {
            Worker w = poolById.get(e.getKey());
            if (w == null) {
                continue;
            }
            exactlyMatched.add(w.id());
            long tokens = e.getValue();
            double ratio = request.inputTokens() <= 0 ? 0 : (double) tokens / request.inputTokens();
            if (tokens > 0) {
                bestMatched = Math.max(bestMatched, tokens);
                if (tokens >= config.minMatchedTokens() && ratio >= config.minMatchRatio()) {
                    owners.add(new Owner(w, tokens, Math.max(0, request.inputTokens() - tokens)));
                }
            }
        }
        PrefixMatch treeMatch = match; // the tree's answers, or none
        if (treeMatch != null) {
            // Owners below the thresholds count only towards bestMatched (over routable workers): one pool lookup
            // per new running maximum, not per owner.
            for (int i = 0; i < treeMatch.ownerCount(); i++) {
                int elements = treeMatch.lengthAt(i);
                if (key.nothingMatched(elements)) { // an adapter key's header alone is no hit
                    continue;
                }
                long tokens = key.toTokens(elements);
                boolean candidate = tokens >= config.minMatchedTokens()
                        && key.matchRatio(elements) >= config.minMatchRatio();
                if (!candidate && tokens <= bestMatched) {
                    continue;
                }
                String id = treeMatch.ownerAt(i);
                Worker w = exactTokens.containsKey(id) ? null : poolById.get(id);
                if (w == null) {
                    continue;
                }
                bestMatched = Math.max(bestMatched, tokens);
                if (candidate) {
                    owners.add(new Owner(w, tokens, Math.max(0, request.inputTokens() - tokens)));
                }
            }
        }
        boolean gateBlind = config.workerQueueLimit() > 0 && !anyFresh(loads, pool);
        if (gateBlind && gateBlindDecisions.getAndIncrement() % GATE_BLIND_LOG_SAMPLE == 0) {
            LOG.warn("--worker-queue-limit {} is set but no routable worker has a fresh load report; the gate admits"
                    + " everyone (logged 1 in {})", config.workerQueueLimit(), GATE_BLIND_LOG_SAMPLE);
        }
        Ladder ladder = new Ladder(request, key, match, treeMatch, exactTokens, bestMatched, gateBlind,
                exactlyMatched, exactIndexOnly);
        if (owners.isEmpty()) {
            return ladder.fallback(false);
        }
        // Every sort key is frozen before sorting (matched tokens in Owner, loads and in-flight counts in the
        // comparator) and the last key is the unique id: a total order however other threads move the counters.
        List<String> ownerIds = ids(owners);
        Comparator<String> ownerPressure = pressure(loads, ownerIds, request);
        // the first `cap` owners in that order (TopK: the same as sorting them all and cutting, without the sort)
        owners = TopK.first(owners, config.candidateCap(pool.size()),
                OWNER_ORDER_HEAD.thenComparing(Owner::id, ownerPressure).thenComparing(Owner::id));

        List<Owner> gateRejected = new ArrayList<>();
        List<Owner> admitted = new ArrayList<>();
        for (Owner o : owners) {
            if (!CacheAdmission.queueGateAdmits(loads, o.id(), config.workerQueueLimit())) {
                gateRejected.add(o);
            } else if (!CacheAdmission.hardAdmits(loads, o.id(), request.inputTokens())) {
                ladder.admissionRejections++;
            } else {
                admitted.add(o);
            }
        }
        ladder.gateRejections = gateRejected.size();
        if (!admitted.isEmpty()) {
            return ladder.tournament(owners.get(0), admitted);
        }
        if (!gateRejected.isEmpty()) {
            if (config.saturationQueueFloor() > 0) {
                Decision pin = ladder.saturationPin(gateRejected);
                if (pin != null) {
                    return pin;
                }
            } else if (gateRejected.size() == owners.size() && fleetAllAtOrOver(loads, pool, config.workerQueueLimit())) {
                Decision kept = ladder.fleetSaturationTier(owners);
                if (kept != null) {
                    return kept;
                }
            }
        }
        return ladder.fallback(true);
    }

    /** The exits of one decision; carries the counters the detail reports. */
    private final class Ladder {
        final RoutingRequest request;
        final CacheKey key;
        final PrefixMatch match;
        final PrefixMatch treeMatch;
        final Map<String, Long> exactTokens;
        final long bestMatched;
        final boolean gateBlind;
        final Set<String> exactlyMatched;
        /** Only the exact index is consulted: every answer, a miss included, is the exact index's. */
        final boolean exactIndexOnly;
        int gateRejections;
        int admissionRejections;

        Ladder(RoutingRequest request, CacheKey key, PrefixMatch match, PrefixMatch treeMatch,
               Map<String, Long> exactTokens, long bestMatched, boolean gateBlind, Set<String> exactlyMatched,
               boolean exactIndexOnly) {
            this.treeMatch = treeMatch;
            this.exactIndexOnly = exactIndexOnly;
            this.exactlyMatched = exactlyMatched;
            this.request = request;
            this.key = key;
            this.match = match;
            this.exactTokens = exactTokens;
            this.bestMatched = bestMatched;
            this.gateBlind = gateBlind;
        }

        Decision decide(Worker worker, DecisionReason reason, String source, String label, int overrides) {
            long selected = matchedTokens(worker);
            // the rank is worth a second hash only when the exact index found the match and the engine takes a
            // rank by header (vLLM's X-data-parallel-rank); SGLang's own DP controller places requests itself
            ExactPrefixSource exactSource = exact;
            int rank = selected > 0 && exactSource != null && exactlyMatched.contains(worker.id())
                    && worker.engine() == EngineType.VLLM
                    ? exactSource.bestRank(worker, idsOf(worker), request.adapter(), request.extras()) : -1;
            CacheAwareDetail detail = new CacheAwareDetail(label, gateRejections, admissionRejections, overrides,
                    selected, bestMatched, match, gateBlind,
                    exactIndexOnly || exactlyMatched.contains(worker.id())
                            ? CacheAwareDetail.INDEX_EXACT : CacheAwareDetail.INDEX_APPROXIMATE, rank);
            return new Decision(worker, reason, source, detail);
        }

        /** The ids {@code worker}'s engine computes for this request (its exact answer was found with them). */
        int[] idsOf(Worker worker) {
            EngineTokenIds byEngine = request.engineTokenIds();
            return byEngine == null ? request.tokenIds() : byEngine.forEngine(worker.engine());
        }

        /** The chosen worker's matched tokens: its exact answer when it has one, else the tree's. */
        long matchedTokens(Worker worker) {
            Long exactAnswer = exactTokens.get(worker.id());
            if (exactAnswer != null) {
                return exactAnswer;
            }
            if (treeMatch == null) {
                return 0;
            }
            int elements = treeMatch.matchedLength(worker.id());
            return elements == 0 ? 0 : key.toTokens(elements);
        }

        /**
         * Least uncached work first (the first admitted owner in locality order); each rival within
         * the switch margin takes over only when the current best is materially more pressured.
         */
        Decision tournament(Owner topRanked, List<Owner> admitted) {
            Owner primary = admitted.get(0);
            EngineLoadSnapshot loads = request.loads();
            List<String> admittedIds = ids(admitted);
            PrefillPressure pressure = loads == null ? null : PrefillPressure.of(loads, admittedIds, request.inFlight());
            String source = pressure == null ? Decision.SOURCE_ROUTER_LOCAL : pressure.source().label();
            Owner best = primary;
            int overrides = 0;
            if (!config.disablePressureGuard() && pressure != null) {
                for (int i = 1; i < admitted.size(); i++) {
                    Owner rival = admitted.get(i);
                    if (rival.uncachedTokens() - primary.uncachedTokens() > config.switchMarginTokens()) {
                        break; // sorted: every later rival has at least this much more uncached work
                    }
                    WorkerLoad rivalLoad = pressure.load(rival.id()).orElse(null);
                    WorkerLoad bestLoad = pressure.load(best.id()).orElse(null);
                    if (CacheAdmission.materiallyLessPressured(rivalLoad, bestLoad, config)) {
                        best = rival;
                        overrides++;
                    }
                }
            }
            DecisionReason reason = overrides > 0 ? DecisionReason.CACHE_PRESSURE_GUARD
                    : primary == topRanked ? DecisionReason.CACHE_PRIMARY : DecisionReason.CACHE_BACKUP_ADMISSION;
            return decide(best.worker(), reason, source, CacheAwareDetail.CACHE_HIT, overrides);
        }

        /**
         * The saturation pin: when no routable worker is provably below the floor (unknown is not evidence),
         * stay on the least-pressured gate-rejected owner that still passes hard admission;
         * pressure only, then worker id, never re-ranked by match depth. Null when it yields.
         */
        Decision saturationPin(List<Owner> gateRejected) {
            EngineLoadSnapshot loads = request.loads();
            if (loads.anyFreshQueueBelow(workerIds(request.candidates()), config.saturationQueueFloor())) {
                return null;
            }
            // Pressure looked up for the rejected owners themselves: the admitted set is empty here.
            PrefillPressure pressure = PrefillPressure.of(loads, ids(gateRejected), request.inFlight());
            Owner pinned = null;
            for (Owner o : gateRejected) {
                if (!CacheAdmission.hardAdmits(loads, o.id(), request.inputTokens())) {
                    continue;
                }
                if (pinned == null || pressure.compare(o.id(), pinned.id()) < 0
                        || (pressure.compare(o.id(), pinned.id()) == 0 && o.id().compareTo(pinned.id()) < 0)) {
                    pinned = o;
                }
            }
            return pinned == null ? null : decide(pinned.worker(), DecisionReason.SATURATION_PIN,
                    pressure.source().label(), CacheAwareDetail.SATURATION_PIN, 0);
        }

        /** Floor unset: the whole fleet is provably queued, so keep the prefix on the owner with least uncached work. */
        Decision fleetSaturationTier(List<Owner> owners) {
            EngineLoadSnapshot loads = request.loads();
            for (Owner o : owners) { // already in uncached-work order (matched desc), then pressure, then id
                if (CacheAdmission.hardAdmits(loads, o.id(), request.inputTokens())) {
                    String source = PrefillPressure.of(loads, ids(owners), request.inFlight()).source().label();
                    return decide(o.worker(), DecisionReason.FLEET_SATURATION_OWNER, source,
                            CacheAwareDetail.ALL_QUEUED, 0);
                }
            }
            return null;
        }

        /** Min-load choices over gate-admitted workers, or over the whole pool when everyone is queueing. */
        Decision fallback(boolean hadOwners) {
            List<Worker> open;
            if (config.workerQueueLimit() <= 0) {
                open = request.candidates(); // no gate: every candidate is admitted, no per-request copy of the pool
            } else {
                open = new ArrayList<>();
                for (Worker w : request.candidates()) {
                    if (CacheAdmission.queueGateAdmits(request.loads(), w.id(), config.workerQueueLimit())) {
                        open.add(w);
                    }
                }
            }
            DecisionReason reason;
            String label;
            if (open.isEmpty()) {
                open = request.candidates();
                reason = DecisionReason.ALL_QUEUED_MIN_LOAD;
                label = CacheAwareDetail.ALL_QUEUED;
            } else if (hadOwners) {
                reason = DecisionReason.CAPACITY_FALLBACK_MIN_LOAD;
                label = CacheAwareDetail.CACHE_WORKER_QUEUED;
            } else {
                reason = DecisionReason.CACHE_MISS_MIN_LOAD;
                label = CacheAwareDetail.CACHE_MISS;
            }
            Supplier<AdapterView> views = adapterViews;
            if (request.adapter() != null && views != null) {
                // adapter requests: residency and load decide together (AdapterPlacement), not two random samples
                AdapterPlacement.Placement placed = AdapterPlacement.choose(open, views.get(), request.adapter(),
                        id -> requestLoad(request, id), adapterWeightRequests, random.get());
                return decide(placed.worker(), reason, Decision.SOURCE_ROUTER_LOCAL, label, 0);
            }
            Decision d = fallback.select(request.withCandidates(open));
            String source = d.pressureSource().equals(Decision.SOURCE_NONE) ? pressureSourceOfOne(d.worker())
                    : d.pressureSource();
            return decide(d.worker(), reason, source, label, 0);
        }

        private String pressureSourceOfOne(Worker worker) {
            return request.loads() == null ? Decision.SOURCE_ROUTER_LOCAL
                    : request.loads().pressureSource(worker.id()).label();
        }
    }

    /**
     * A worker's requests for adapter placement: the router's own in-flight count. Not the engine's scraped
     * running + waiting: that lags by up to a scrape interval, so a worker that has just finished a request
     * still reads busy, and against a free-slot margin of 0.2 * weight (1.6 requests at the default weight)
     * that lag alone moved a sequential client's adapter between workers in the LoRA end-to-end test.
     */
    private static int requestLoad(RoutingRequest request, String workerId) {
        return request.inFlight().applyAsInt(workerId);
    }

    private static final Comparator<Owner> OWNER_ORDER_HEAD = Comparator.comparingLong(Owner::matchedTokens).reversed();

    private static Comparator<String> pressure(EngineLoadSnapshot loads, List<String> ids, RoutingRequest request) {
        return loads == null ? PrefillPressure.routerLocal(ids, request.inFlight())
                : PrefillPressure.of(loads, ids, request.inFlight());
    }

    private static boolean anyFresh(EngineLoadSnapshot loads, List<Worker> pool) {
        if (loads == null) {
            return false;
        }
        for (Worker w : pool) {
            if (loads.isFresh(w.id())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Every fleet worker has a fresh sample at or over the limit, or is a scraped worker with a stale
     * reading (stale = saturated); any other unknown is not saturated.
     */
    /**
     * For the router-side queue's locality: a lookup of how many of {@code request}'s prompt tokens the
     * prefix tree says each worker holds. The tree is matched once, on the first call, and the answer
     * kept (a queued request asked again on every freed slot costs a map read, not a tree walk).
     */
    public java.util.function.ToLongFunction<String> cachedTokensProbe(RoutingRequest request) {
        CacheKey key = CacheKey.of(request, config);
        if (key == null || exactOnly) {
            return workerId -> 0;
        }
        PrefixMatch[] memo = new PrefixMatch[1];
        return workerId -> {
            PrefixMatch m = memo[0];
            if (m == null) {
                m = indexFor(key).match(key.key);
                memo[0] = m;
            }
            int elements = m.matchedLength(workerId);
            return elements == 0 || key.nothingMatched(elements) ? 0 : key.toTokens(elements);
        };
    }

    /** True when the queue gate is set and every worker of {@code pool} is fresh at or over it (the fleet-saturation test). */
    public boolean fleetSaturated(EngineLoadSnapshot loads, List<Worker> pool) {
        return fleetAllAtOrOver(loads, pool, config.workerQueueLimit());
    }

    private static boolean fleetAllAtOrOver(EngineLoadSnapshot loads, List<Worker> pool, int limit) {
        if (loads == null || limit <= 0) {
            return false;
        }
        for (Worker w : pool) {
            Optional<WorkerLoad> l = loads.fresh(w.id());
            if (l.isEmpty() ? !loads.countsAsSaturated(w.id()) : l.get().numWaitingReqs() < limit) {
                return false;
            }
        }
        return true;
    }

    private static List<String> ids(List<Owner> owners) {
        List<String> out = new ArrayList<>(owners.size());
        for (Owner o : owners) {
            out.add(o.id());
        }
        return out;
    }

    private static List<String> workerIds(List<Worker> workers) {
        List<String> out = new ArrayList<>(workers.size());
        for (Worker w : workers) {
            out.add(w.id());
        }
        return out;
    }
}
