package io.kvroute.router.policy;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.worker.Worker;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Session affinity as a wrapper: requests with the same {@link RoutingRequest#sessionKey()} go to
 * the same worker while it stays routable (in {@code candidates}: healthy, right model and role)
 * and passes hard admission, and while the session has been used within the idle TTL. Otherwise,
 * and for requests without a key, the delegate decides and the session is (re)bound to its pick.
 *
 * <p>Concurrency: thread-safe. Bindings live in a {@link ConcurrentHashMap}; two concurrent first
 * requests of one session may bind different workers, the later write wins (affinity is a
 * preference, never a correctness requirement). Expired bindings are swept every
 * {@link #SWEEP_EVERY} selections, an O(sessions) pass amortized over those selections, so memory
 * is bounded by the sessions active within one TTL. Time comes from the injected nano clock.
 */
public final class StickySessionPolicy implements RoutingPolicy {
    /** Selections between two sweeps of expired sessions. */
    static final int SWEEP_EVERY = 4096;

    private record Binding(String workerId, long lastUsedNanos) {}

    private final RoutingPolicy delegate;
    private final String name;
    private final long idleTtlNanos;
    private final LongSupplier nanoClock;
    private final Map<String, Binding> sessions = new ConcurrentHashMap<>();
    private final AtomicLong selections = new AtomicLong();

    /**
     * @param name the policy label ({@code sticky} for {@code --policy sticky}, else the delegate's name)
     * @param idleTtlNanos a session unused for longer than this is forgotten
     */
    public StickySessionPolicy(String name, RoutingPolicy delegate, long idleTtlNanos, LongSupplier nanoClock) {
        if (idleTtlNanos <= 0) {
            throw new IllegalArgumentException("idleTtlNanos must be > 0: " + idleTtlNanos);
        }
        this.name = requireNonNull(name, "name");
        this.delegate = requireNonNull(delegate, "delegate");
        this.idleTtlNanos = idleTtlNanos;
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean needsTokens() {
        return delegate.needsTokens();
    }

    public RoutingPolicy delegate() {
        return delegate;
    }

    /** Live (possibly expired, not yet swept) session bindings. */
    public int sessionCount() {
        return sessions.size();
    }

    @Override
    public Decision select(RoutingRequest request) {
        String key = request.sessionKey();
        if (key == null) {
            return delegate.select(request);
        }
        long now = nanoClock.getAsLong();
        if (selections.incrementAndGet() % SWEEP_EVERY == 0) {
            sessions.values().removeIf(b -> now - b.lastUsedNanos() > idleTtlNanos);
        }
        Binding bound = sessions.get(key);
        if (bound != null && now - bound.lastUsedNanos() <= idleTtlNanos) {
            Worker worker = routable(request, bound.workerId());
            if (worker != null && CacheAdmission.hardAdmits(request.loads(), worker.id(), request.inputTokens())) {
                sessions.put(key, new Binding(worker.id(), now));
                String source = request.loads() == null ? Decision.SOURCE_ROUTER_LOCAL
                        : request.loads().pressureSource(worker.id()).label();
                return new Decision(worker, DecisionReason.STICKY_SESSION, source);
            }
        }
        Decision decision = delegate.select(request);
        sessions.put(key, new Binding(decision.worker().id(), now));
        return decision;
    }

    private static Worker routable(RoutingRequest request, String workerId) {
        for (Worker w : request.candidates()) {
            if (w.id().equals(workerId)) {
                return w;
            }
        }
        return null;
    }
}
