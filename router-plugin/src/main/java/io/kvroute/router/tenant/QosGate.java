package io.kvroute.router.tenant;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The router-side queue: admits a request while a worker that may serve it has room for its tokens, and
 * otherwise holds it at the router, per class and tenant, instead of piling it onto saturated engines.
 *
 * <p>Capacity is tokens in flight, counted per worker by default: each worker holds
 * {@code --qos-worker-capacity-tokens}, and an admitted request holds its cost (input tokens plus its
 * reserved output) on one worker, its {@linkplain QosTicket#holder holder}, until it ends. The gate places it
 * on a candidate with room (the most cached tokens of its prompt first, then the least loaded); the dispatch
 * then routes it among the workers with room only ({@link #placeable}) and moves the hold to the worker it
 * chose, and again on each retry ({@link #place}). So a policy that follows prefixes (cache_aware) cannot pile
 * more admitted work onto the prefix holder than it has room for: the excess waits here, or goes to another
 * worker with room. A ticket without candidates counts against one fleet-wide bin instead
 * ({@code --qos-capacity-scope fleet}: the flag's value times the usable workers). See {@link CapacityLedger}.
 * When the queue gate is configured ({@code --worker-queue-limit}), a fleet whose every fresh worker reports a
 * queue at or over the limit counts as full as well ({@link Fleet#engineSaturated}).
 *
 * <p>Classes, highest first, share each worker's capacity as SMG's scheduler shares slots
 * ({@code model_gateway/src/middleware/scheduler/{engine,slots}.rs}): each class has a reservation
 * (floor and share, {@link ClassSpec#reservedTokens}) whose unused part is held back from lower
 * classes; a freed slot goes to the highest class with work (strict order: a class whose head fits
 * on none of its workers blocks the classes below it), and within a class to the tenant {@link FairQueue} picks
 * (VTC with locality inside the slack, on the worker that freed capacity; or, with {@link Fairness#REQUESTS},
 * round robin by request count: every admitted request costs one unit whatever its tokens). A head that waits for
 * its prefix holder while another of its workers has room does not block: the drain passes over its tenant, keeping
 * its place in the fair order, to the next tenant of the class, and to the classes below when every head left in
 * the class so waits ({@link Admission}). A class's head older than
 * its starvation threshold may use capacity held back for higher classes, and goes first, once per threshold
 * period (so a class backlogged for good gets a trickle, not every freed slot). A class that may preempt
 * takes the place of lower-class requests that are admitted but have not sent a byte (lowest class
 * first, newest first), only when that makes it fit.
 *
 * <p>Placement and the bounded wait for a request's prefix holder ({@code --qos-holder-wait-ms}: a request whose
 * holder is full waits for it, in its class's queue, rather than run uncached elsewhere) are {@link Placement}'s.
 * Passing over a waiting head is fair to it: it is never placed but on its holder before its bound, its tenant is
 * charged nothing meanwhile while the tenants served past it are, so it is picked first again when the holder frees
 * room (the locality pick on that worker prefers it too), and the bound ends the wait, so others cannot pass it
 * forever. While such heads are queued, an arrival that queues behind them drains at once, so it need not wait for
 * the next end or tick to be served past them.
 *
 * <p>Every request ends in exactly one callback: admitted (then possibly preempted before its first
 * byte), or rejected: 429 {@code queue_full} at arrival, 429 {@code queue_timeout} after its class's
 * timeout while workers exist, 503 {@code no_worker} when none does. Nothing waits forever: the
 * adapter calls {@link #tick} periodically.
 *
 * <p>Threading: thread-safe. State is guarded by one lock held for short, non-blocking sections;
 * callbacks and listener calls run after it is released, on the calling thread.
 */
public final class QosGate {

    /** Service weight of an input token not cached on the chosen worker. */
    public static final double WEIGHT_UNCACHED = 1.0;
    /** Service weight of an input token cached on the chosen worker (prefill mostly skipped). */
    public static final double WEIGHT_CACHED = 0.1;
    /** Service weight of an output token. */
    public static final double WEIGHT_OUTPUT = 1.0;
    /** Bounds the victims one admission may preempt. */
    static final int MAX_VICTIMS = 4;
    /**
     * Bounds the tenants whose head waits for its holder that one look at a class passes over (a placement each,
     * under the lock); past that many the class holds the classes below as a head that fits nowhere does.
     */
    static final int MAX_PASSED_HEADS = 16;
    private static final double WAIT_EWMA_ALPHA = 0.2;

    /** What the fair queue counts per tenant. */
    public enum Fairness {
        /** Weighted tokens: uncached input, cached input at a lower weight, streamed output (VTC). */
        TOKENS,
        /** One unit per admitted request, refunded as tokens are: round robin by request count. */
        REQUESTS
    }

    /** The fleet as the gate needs to see it; answers must be cheap and must not block. */
    public interface Fleet {
        /** Workers that can serve now (healthy, breaker closed, not draining). */
        int usableWorkers();

        /** True when the engines themselves report every worker saturated (the queue gate's view). */
        boolean engineSaturated();
    }

    private final Supplier<TenantDirectory> directory;
    private final long workerCapacityTokens;
    private final Fleet fleet;
    private final LongSupplier nanoTime;
    private final QosListener listener;
    private final double slack;
    private final Fairness fairness;
    private final ReentrantLock lock = new ReentrantLock();
    private final EnumMap<PriorityClass, ClassState> classes = new EnumMap<>(PriorityClass.class); // guarded by lock
    private final CapacityLedger ledger = new CapacityLedger(); // guarded by lock
    private final Placement placement; // guarded by lock
    private long seq; // guarded by lock

    /** What a look at a waiting head found. */
    private enum Admission {
        /** Admitted onto a worker. */
        ADMITTED,
        /** Waiting for its prefix holder while another of its workers has room: others may be served past it. */
        WAITING_FOR_HOLDER,
        /** Fits on none of its workers (or none is left): the classes below wait behind it. */
        BLOCKED
    }

    /** Per-class state; guarded by the gate's lock. */
    private static final class ClassState {
        final FairQueue<QosTicket> queue;
        /** Scratch of one {@code admitFrom}: the tenants whose head it passed over. */
        final Set<String> passedHeads = new HashSet<>();
        final TreeMap<Long, QosTicket> arrivals = new TreeMap<>(); // waiting, oldest first
        final TreeMap<Long, QosTicket> notStarted = new TreeMap<>(); // admitted, no byte sent yet
        double waitEwmaNanos;
        /** When this class last admitted by starvation promotion; promotions are one per starvation period. */
        long lastPromotionNanos;
        boolean promotedBefore;

        ClassState(double slack) {
            this.queue = new FairQueue<>(slack);
        }
    }

    /**
     * @param workerCapacityTokens tokens in flight one worker is given (&gt; 0)
     * @param slackTokens the locality slack Δ in weighted tokens per unit of weight (0: pure VTC)
     */
    public QosGate(Supplier<TenantDirectory> directory, long workerCapacityTokens, double slackTokens, Fleet fleet,
            LongSupplier nanoTime, QosListener listener) {
        this(directory, workerCapacityTokens, slackTokens, Fairness.TOKENS, fleet, nanoTime, listener);
    }

    /** A gate that never waits for a prefix holder ({@code --qos-holder-wait-ms 0}). */
    public QosGate(Supplier<TenantDirectory> directory, long workerCapacityTokens, double slack, Fairness fairness,
            Fleet fleet, LongSupplier nanoTime, QosListener listener) {
        this(directory, workerCapacityTokens, slack, fairness, 0, fleet, nanoTime, listener);
    }

    /**
     * @param slack the locality slack Δ per unit of weight, in the unit {@code fairness} counts (weighted
     *     tokens, or requests)
     * @param holderWaitNanos how long a request whose prefix holder is full waits for it ({@link Placement}); 0: never
     */
    public QosGate(Supplier<TenantDirectory> directory, long workerCapacityTokens, double slack, Fairness fairness,
            long holderWaitNanos, Fleet fleet, LongSupplier nanoTime, QosListener listener) {
        this.fairness = Objects.requireNonNull(fairness, "fairness");
        this.directory = Objects.requireNonNull(directory, "directory");
        if (workerCapacityTokens < 1) {
            throw new IllegalArgumentException("workerCapacityTokens must be >= 1 (got " + workerCapacityTokens + ")");
        }
        this.workerCapacityTokens = workerCapacityTokens;
        this.slack = slack;
        this.fleet = Objects.requireNonNull(fleet, "fleet");
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.listener = listener == null ? QosListener.NONE : listener;
        this.placement = new Placement(ledger, workerCapacityTokens, holderWaitNanos, fleet);
        for (PriorityClass c : PriorityClass.values()) {
            classes.put(c, new ClassState(slack));
        }
    }

    public double slackTokens() {
        return slack;
    }

    /** Offers a new request: exactly one of its callbacks follows, now or later. */
    public void offer(QosTicket t) {
        if (!t.state.compareAndSet(QosTicket.NEW, QosTicket.QUEUED)) {
            throw new IllegalStateException("offered twice: " + t);
        }
        List<Runnable> after = new ArrayList<>(2);
        lock.lock();
        try {
            long now = nanoTime.getAsLong();
            TenantDirectory dir = directory.get();
            ClassSpec spec = dir.classSpec(t.priority);
            ClassState cs = classes.get(t.priority);
            t.seq = ++seq;
            t.enqueuedNanos = now;
            Collection<String> bins = placement.binsOf(t);
            String bin;
            if (bins.isEmpty()) {
                reject(t, 503, "no_worker", 1, after);
            } else if (!queuedAtOrAbove(t.priority)
                    && (bin = placement.place(t, bins, false, null, dir, now, cs.queue.size() < spec.queueCap())) != null) {
                cs.queue.admitDirect(t.tenant.name(), t.tenant.weight());
                admit(t, bin, now, false, after);
            } else if (spec.canPreempt() && t.holderWaitFor == null && !queuedAtOrAbove(t.priority)
                    && (bin = preemptFor(t, bins, dir, after)) != null) {
                cs.queue.admitDirect(t.tenant.name(), t.tenant.weight());
                admit(t, bin, now, false, after);
            } else if (cs.queue.size() >= spec.queueCap()) {
                reject(t, 429, "queue_full", retryAfterSeconds(cs), after);
            } else {
                t.deadlineNanos = now + spec.queueTimeoutMillis() * 1_000_000L;
                cs.queue.add(t.tenant.name(), t.tenant.weight(), t);
                cs.arrivals.put(t.seq, t);
                String tenant = t.tenant.name();
                PriorityClass c = t.priority;
                after.add(() -> listener.waiting(tenant, c));
                if (placement.anyWaitedQueued()) {
                    drain(null, null, after); // heads waiting for their holder may be passed over: this one may go now
                }
            }
        } finally {
            lock.unlock();
        }
        after.forEach(Runnable::run);
    }

    /**
     * The request's first byte is about to go out; false when it was preempted first (the adapter
     * must then send nothing). {@code cachedTokens}: its input tokens cached on the chosen worker.
     */
    public boolean started(QosTicket t, long cachedTokens) {
        if (!t.state.compareAndSet(QosTicket.ADMITTED, QosTicket.STARTED)) {
            return t.state.get() == QosTicket.STARTED;
        }
        List<Runnable> after = new ArrayList<>(1);
        lock.lock();
        try {
            classes.get(t.priority).notStarted.remove(t.seq);
            long cached = Math.min(Math.max(0, cachedTokens), t.inputTokens);
            if (cached > 0 && !t.released) {
                charge(t, -(WEIGHT_UNCACHED - WEIGHT_CACHED) * cached, 0, after);
            }
        } finally {
            lock.unlock();
        }
        after.forEach(Runnable::run);
        return true;
    }

    /**
     * Charges {@code outputTokens} streamed to the client (the relay counts them as it writes); negative when the
     * answer's final usage settles the count lower than the relay counted (a refund of that many).
     */
    public void chargeOutput(QosTicket t, long outputTokens) {
        if (outputTokens == 0) {
            return;
        }
        List<Runnable> after = new ArrayList<>(1);
        lock.lock();
        try {
            if (!t.released) {
                charge(t, WEIGHT_OUTPUT * outputTokens, 0, after);
            }
        } finally {
            lock.unlock();
        }
        after.forEach(Runnable::run);
    }

    /**
     * The request ended (any way). Frees its tokens and serves waiting requests, preferring those
     * whose prefix is cached on {@code workerId} (null when unknown). A request that never sent a
     * byte gets its service refunded.
     */
    public void finished(QosTicket t, String workerId) {
        finished(t, workerId, false);
    }

    /**
     * A request ended; {@code failedUpstream}: its answer was an error of the router or a worker (5xx), so the
     * tenant is not charged for it even after its first byte (all its service is refunded).
     */
    public void finished(QosTicket t, String workerId, boolean failedUpstream) {
        List<Runnable> after = new ArrayList<>(4);
        lock.lock();
        try {
            // the capacity freed is its holder's (per-worker bins); the prompts cached where its own prompt went (its
            // prefill worker under PD, else that same worker) go first
            String freed = t.holder != null && !t.holder.equals(CapacityLedger.FLEET) && !t.released ? t.holder : workerId;
            String cachedOn = t.prefixWorker != null ? t.prefixWorker : freed;
            int s = t.state.get();
            if (s == QosTicket.QUEUED) { // the client left while waiting
                ClassState cs = classes.get(t.priority);
                cs.queue.remove(t.tenant.name(), t);
                cs.arrivals.remove(t.seq);
                t.state.set(QosTicket.DONE);
                holderWaitEnded(t, QosListener.HOLDER_WAIT_GONE, after);
                drain(null, null, after); // it may have been a head that blocked, or held its tenant's next request
            } else {
                if (s == QosTicket.ADMITTED) {
                    t.state.compareAndSet(QosTicket.ADMITTED, QosTicket.DONE);
                } else if (s == QosTicket.STARTED) {
                    t.state.set(QosTicket.DONE);
                }
                if ((s != QosTicket.STARTED || failedUpstream) && !t.released
                        && (t.chargedService != 0 || t.chargedRequests != 0)) {
                    // aborted before any byte, or failed upstream: refund
                    charge(t, -t.chargedService, -t.chargedRequests, after);
                }
                release(t);
                drain(freed, cachedOn, after);
            }
        } finally {
            lock.unlock();
        }
        after.forEach(Runnable::run);
    }

    /** Expires waits past their class's timeout, promotes starved heads, and serves what now fits. */
    public void tick() {
        List<Runnable> after = new ArrayList<>();
        lock.lock();
        try {
            long now = nanoTime.getAsLong();
            for (ClassState cs : classes.values()) {
                for (Iterator<QosTicket> it = cs.arrivals.values().iterator(); it.hasNext(); ) {
                    QosTicket t = it.next();
                    if (t.deadlineNanos - now > 0) {
                        break;
                    }
                    it.remove();
                    cs.queue.remove(t.tenant.name(), t);
                    if (placement.binsOf(t).isEmpty()) {
                        reject(t, 503, "no_worker", 1, after);
                    } else {
                        reject(t, 429, "queue_timeout", retryAfterSeconds(cs), after);
                    }
                }
            }
            drain(null, null, after);
        } finally {
            lock.unlock();
        }
        after.forEach(Runnable::run);
    }

    /**
     * Notes where {@code t}'s prompt went when that is not the worker holding its tokens (a PD request's prefill
     * worker): when it ends, waiters cached there go first. Thread-safe without the lock (a volatile write).
     */
    public void prefixOn(QosTicket t, String workerId) {
        t.prefixWorker = workerId;
    }

    /** Waiting requests of one class. */
    public int queued(PriorityClass c) {
        lock.lock();
        try {
            return classes.get(c).queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** Waiting requests of {@code tenant} in class {@code c}: a count the fair queue keeps, one lookup under the lock. */
    public int queued(PriorityClass c, String tenant) {
        lock.lock();
        try {
            return classes.get(c).queue.size(tenant);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waiting requests of class {@code c} whose tenant is not among {@code tenants} (the class's count less each named
     * tenant's, one lookup per name under one lock): what a bounded metric's {@code other} label shows. The caller
     * bounds {@code tenants}; it must not block while iterated.
     */
    public int queuedExcept(PriorityClass c, Collection<String> tenants) {
        lock.lock();
        try {
            FairQueue<QosTicket> q = classes.get(c).queue;
            int n = q.size();
            for (String t : tenants) {
                n -= q.size(t);
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    /** Tokens in flight admitted by this gate, all classes and workers. */
    public long inFlightTokens() {
        lock.lock();
        try {
            return ledger.totalTokens();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The workers {@code t} may be routed to now: the one holding its tokens and every other candidate with room
     * for them (under its class's reservations, or without them when it was admitted by starvation promotion).
     * Null when its capacity is fleet-wide, or it no longer holds any (ended, preempted): no filter then. One lock
     * per call, so a dispatch filters its candidates against one consistent view.
     */
    public Set<String> placeable(QosTicket t) {
        lock.lock();
        try {
            if (t.candidates == null || t.holder == null || t.released) {
                return null;
            }
            TenantDirectory dir = directory.get();
            Collection<String> bins = t.candidates.get();
            Set<String> out = new HashSet<>(2 * bins.size() + 2);
            out.add(t.holder);
            if (!fleet.engineSaturated()) {
                for (String w : bins) {
                    if (!out.contains(w) && ledger.fits(w, t.priority, t.costTokens, workerCapacityTokens, t.promoted, dir)) {
                        out.add(w);
                    }
                }
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves {@code t}'s tokens onto {@code workerId}, the worker its dispatch chose (the first attempt, or a
     * retry's). False, moving nothing, when that worker lost its room since {@link #placeable} (another request
     * took it), or is not one of the request's candidates: the dispatch then chooses again. {@code force} moves it
     * regardless (a retry whose every worker with room is gone may overshoot one worker by this one request). The
     * worker it leaves serves waiting requests. True and nothing done for a fleet-wide ticket, or one that no longer
     * holds tokens.
     */
    public boolean place(QosTicket t, String workerId, boolean force) {
        Objects.requireNonNull(workerId, "workerId");
        List<Runnable> after = new ArrayList<>(2);
        lock.lock();
        try {
            if (t.candidates == null || t.holder == null || t.released || t.holder.equals(workerId)) {
                return true;
            }
            if (!force && (!t.candidates.get().contains(workerId) || fleet.engineSaturated()
                    || !ledger.fits(workerId, t.priority, t.costTokens, workerCapacityTokens, t.promoted, directory.get()))) {
                return false;
            }
            String left = t.holder;
            ledger.release(left, t.priority, t.costTokens);
            ledger.hold(workerId, t.priority, t.costTokens);
            t.holder = workerId;
            drain(left, left, after);
            return true;
        } finally {
            lock.unlock();
            after.forEach(Runnable::run);
        }
    }

    /** A tenant's virtual counter in a class (service per unit of weight). */
    public double counter(PriorityClass c, String tenant) {
        lock.lock();
        try {
            return classes.get(c).queue.counter(tenant);
        } finally {
            lock.unlock();
        }
    }

    // ---- everything below runs under the lock ----

    private boolean queuedAtOrAbove(PriorityClass c) {
        for (PriorityClass k : PriorityClass.highToLow()) {
            if (!classes.get(k).queue.isEmpty()) {
                return true;
            }
            if (k == c) {
                return false;
            }
        }
        return false;
    }

    /**
     * Preempts lower-class requests that have sent nothing from one of {@code t}'s bins (lowest class first, newest
     * first, at most {@link #MAX_VICTIMS}), only where that makes {@code t} fit; the bin, or null when none would.
     */
    private String preemptFor(QosTicket t, Collection<String> bins, TenantDirectory dir, List<Runnable> after) {
        if (fleet.engineSaturated()) {
            return null; // nothing fits however much is freed: preempting would waste the victims
        }
        for (String bin : bins) {
            long capacity = placement.capacityOf(bin);
            long needFreed = ledger.shortfall(bin, t.priority, t.costTokens, capacity, dir);
            List<QosTicket> victims = new ArrayList<>(MAX_VICTIMS);
            long freed = 0;
            outer:
            for (int i = PriorityClass.highToLow().length - 1; i >= 0; i--) {
                PriorityClass k = PriorityClass.highToLow()[i];
                if (!t.priority.above(k)) {
                    break;
                }
                for (QosTicket v : classes.get(k).notStarted.descendingMap().values()) {
                    if (freed >= needFreed || victims.size() == MAX_VICTIMS) {
                        break outer;
                    }
                    if (bin.equals(v.holder)) {
                        victims.add(v);
                        freed += v.costTokens;
                    }
                }
            }
            if (victims.isEmpty() || freed < needFreed) {
                continue;
            }
            for (QosTicket v : victims) {
                if (!v.state.compareAndSet(QosTicket.ADMITTED, QosTicket.PREEMPTED)) {
                    continue; // its first byte won the race: it keeps running
                }
                classes.get(v.priority).notStarted.remove(v.seq);
                if (v.chargedService != 0 || v.chargedRequests != 0) {
                    charge(v, -v.chargedService, -v.chargedRequests, after);
                }
                release(v);
                long retry = retryAfterSeconds(classes.get(v.priority));
                String tenant = v.tenant.name();
                PriorityClass vc = v.priority;
                PriorityClass by = t.priority;
                after.add(() -> listener.preempted(tenant, vc, by));
                after.add(() -> v.callbacks.preempted(retry));
            }
            // false only when a victim's first byte won the race: t then waits (no second bin's victims too)
            return ledger.fits(bin, t.priority, t.costTokens, capacity, false, dir) ? bin : null;
        }
        return null;
    }

    /**
     * Admits what now fits. {@code freedWorker}: the bin that freed capacity, where a waiter is placed first when it
     * fits there; {@code cachedOn}: the worker whose cached prompts the locality pick looks for (null for both: none).
     */
    private void drain(String freedWorker, String cachedOn, List<Runnable> after) {
        TenantDirectory dir = directory.get();
        long now = nanoTime.getAsLong();
        ToLongFunction<QosTicket> locality = cachedOn == null ? null : t -> t.cachedOn(cachedOn);
        while (true) {
            boolean admitted = false;
            // starvation promotion first, lowest class up: a head waiting past its threshold may use held-back capacity
            PriorityClass[] order = PriorityClass.highToLow();
            for (int i = order.length - 1; i >= 0 && !admitted; i--) {
                ClassState cs = classes.get(order[i]);
                if (cs.arrivals.isEmpty()) {
                    continue;
                }
                long starvedAfter = dir.classSpec(order[i]).starvationMillis() * 1_000_000L;
                if (now - cs.arrivals.firstEntry().getValue().enqueuedNanos < starvedAfter
                        || (cs.promotedBefore && now - cs.lastPromotionNanos < starvedAfter)) {
                    // one promotion per starvation period: a class backlogged for good (its head always older than
                    // the threshold) must not take every freed slot ahead of the classes above it
                    continue;
                }
                // a promotion serves the class's fair pick or nothing: it passes over no head
                admitted = admitPick(order[i], cs, cs.queue.pick(locality), freedWorker, true, dir, now, after)
                        == Admission.ADMITTED;
                if (admitted) {
                    cs.promotedBefore = true;
                    cs.lastPromotionNanos = now;
                }
            }
            for (int i = 0; i < order.length && !admitted; i++) {
                ClassState cs = classes.get(order[i]);
                if (cs.queue.isEmpty()) {
                    continue;
                }
                Admission a = admitFrom(order[i], cs, locality, freedWorker, dir, now, after);
                if (a == Admission.BLOCKED) {
                    break; // strict order: the classes below wait behind a head that fits nowhere
                }
                admitted = a == Admission.ADMITTED; // else every head left here waits for its holder: the classes below may go
            }
            if (!admitted) {
                return;
            }
        }
    }

    /**
     * Admits from class {@code c} the request the fair order gives, passing over tenants whose head waits for its
     * holder ({@link Admission#WAITING_FOR_HOLDER}): they stay in the order, unserved, and the next tenant's head is
     * looked at. {@code WAITING_FOR_HOLDER} when every backlogged tenant's head waits so; {@code BLOCKED} at the first
     * head that fits nowhere, or past {@link #MAX_PASSED_HEADS} passed.
     */
    private Admission admitFrom(PriorityClass c, ClassState cs, ToLongFunction<QosTicket> locality, String freedWorker,
            TenantDirectory dir, long now, List<Runnable> after) {
        Set<String> passed = cs.passedHeads;
        passed.clear();
        while (true) {
            FairQueue.Pick<QosTicket> pick = cs.queue.pick(locality, passed);
            if (pick == null) {
                return Admission.WAITING_FOR_HOLDER;
            }
            Admission a = admitPick(c, cs, pick, freedWorker, false, dir, now, after);
            if (a != Admission.WAITING_FOR_HOLDER) {
                return a;
            }
            if (passed.size() == MAX_PASSED_HEADS) {
                return Admission.BLOCKED;
            }
            passed.add(pick.tenant());
        }
    }

    private Admission admitPick(PriorityClass c, ClassState cs, FairQueue.Pick<QosTicket> pick, String freedWorker,
            boolean promoted, TenantDirectory dir, long now, List<Runnable> after) {
        QosTicket t = pick.item();
        Collection<String> bins = placement.binsOf(t);
        String bin = placement.place(t, bins, promoted, freedWorker, dir, now, true);
        if (bin == null) {
            // waiting for its holder by choice, or its workers are full (or gone: its timeout answers it)
            return placement.heldForHolder(t, bins, promoted, dir, now) ? Admission.WAITING_FOR_HOLDER : Admission.BLOCKED;
        }
        cs.queue.admitHead(pick.tenant(), t);
        cs.arrivals.remove(t.seq);
        if (pick.byLocality()) {
            after.add(() -> listener.localityPick(c));
        }
        admit(t, bin, now, promoted, after);
        return Admission.ADMITTED;
    }

    private void admit(QosTicket t, String bin, long now, boolean promoted, List<Runnable> after) {
        t.state.set(QosTicket.ADMITTED);
        t.admittedOnce = true;
        t.holder = bin;
        t.promoted = promoted;
        holderWaitEnded(t, bin.equals(t.holderWaitFor) ? QosListener.HOLDER_WAIT_ON_HOLDER
                : QosListener.HOLDER_WAIT_BOUND_PASSED, after);
        ClassState cs = classes.get(t.priority);
        ledger.hold(bin, t.priority, t.costTokens);
        cs.notStarted.put(t.seq, t);
        long wait = now - t.enqueuedNanos;
        cs.waitEwmaNanos += WAIT_EWMA_ALPHA * (wait - cs.waitEwmaNanos);
        charge(t, WEIGHT_UNCACHED * t.inputTokens, 1, after);
        String tenant = t.tenant.name();
        PriorityClass c = t.priority;
        after.add(() -> listener.admitted(tenant, c, wait, promoted));
        after.add(t.callbacks::admitted);
    }

    private void release(QosTicket t) {
        if (t.released || !t.admittedOnce) {
            return; // already released, or refused before it was ever admitted
        }
        t.released = true;
        ClassState cs = classes.get(t.priority);
        ledger.release(t.holder, t.priority, t.costTokens);
        cs.notStarted.remove(t.seq);
        cs.queue.finished(t.tenant.name());
    }

    /**
     * Charges {@code service} weighted tokens (always reported to the listener) and {@code requests} admissions;
     * the fair queue counts whichever {@link #fairness} names.
     */
    private void charge(QosTicket t, double service, int requests, List<Runnable> after) {
        t.chargedService += service;
        t.chargedRequests += requests;
        double fairUnits = fairness == Fairness.TOKENS ? service : requests;
        if (fairUnits != 0) {
            classes.get(t.priority).queue.charge(t.tenant.name(), fairUnits);
        }
        String tenant = t.tenant.name();
        PriorityClass c = t.priority;
        after.add(() -> listener.service(tenant, c, service));
    }

    private void reject(QosTicket t, int status, String reason, long retryAfterSeconds, List<Runnable> after) {
        t.state.set(QosTicket.DONE);
        holderWaitEnded(t, QosListener.HOLDER_WAIT_GONE, after);
        String tenant = t.tenant.name();
        PriorityClass c = t.priority;
        after.add(() -> listener.shed(tenant, c, reason));
        after.add(() -> t.callbacks.rejected(status, reason, retryAfterSeconds));
    }

    /** Reports how {@code t}'s wait for its prefix holder ended, when it waited for one. */
    private void holderWaitEnded(QosTicket t, String outcome, List<Runnable> after) {
        if (t.holderWaitFor != null) {
            placement.waitedLeftQueue(t);
            PriorityClass c = t.priority;
            after.add(() -> listener.holderWait(c, outcome));
        }
    }

    private static long retryAfterSeconds(ClassState cs) {
        return Math.max(1, (long) Math.ceil(cs.waitEwmaNanos / 1e9));
    }

    /** For tests: the classes' in-flight tokens. */
    Map<PriorityClass, Long> inFlightByClass() {
        lock.lock();
        try {
            EnumMap<PriorityClass, Long> m = new EnumMap<>(PriorityClass.class);
            classes.forEach((c, cs) -> m.put(c, ledger.classTokens(c)));
            return m;
        } finally {
            lock.unlock();
        }
    }

    /** For tests: tokens in flight per worker (or the fleet's bin) and requests held on one. */
    Map<String, Long> inFlightByBin() {
        lock.lock();
        try {
            return ledger.byBin();
        } finally {
            lock.unlock();
        }
    }

    int requestsOn(String bin) {
        lock.lock();
        try {
            return ledger.requests(bin);
        } finally {
            lock.unlock();
        }
    }
}
