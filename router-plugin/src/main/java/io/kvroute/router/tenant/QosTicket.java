package io.kvroute.router.tenant;

import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * One request's place in the {@link QosGate}: who it is for, what it costs, and how the gate tells
 * the adapter what happened to it. The state only moves forward; the one race that matters, the
 * first byte against a preemption, is decided by a compare-and-set on it (SMG
 * {@code model_gateway/src/middleware/scheduler/inflight.rs} does the same with its first-byte sentinel).
 */
public final class QosTicket {

    /** What the gate decided, delivered on the gate's caller thread after its lock is released. */
    public interface Callbacks {
        /** Admitted: start the dispatch. */
        void admitted();

        /** Refused at arrival or after a wait: {@code status} 429 or 503, a reason label, {@code Retry-After} seconds. */
        void rejected(int status, String reason, long retryAfterSeconds);

        /** Admitted earlier but preempted before its first byte: answer 503 and abort the dispatch. */
        void preempted(long retryAfterSeconds);
    }

    static final int NEW = 0;
    static final int QUEUED = 1;
    static final int ADMITTED = 2;
    static final int STARTED = 3;
    static final int PREEMPTED = 4;
    static final int DONE = 5;

    final TenantSpec tenant;
    final PriorityClass priority;
    final long costTokens;
    final long inputTokens;
    final ToLongFunction<String> cachedTokensOn;
    /** The workers that may serve it, read afresh at each look ({@code --qos-capacity-scope worker}); null: fleet-wide. */
    final Supplier<? extends Collection<String>> candidates;
    final Callbacks callbacks;
    final AtomicInteger state = new AtomicInteger(NEW);
    long seq; // written under the gate's lock
    long enqueuedNanos; // written under the gate's lock
    long deadlineNanos; // written under the gate's lock
    double chargedService; // guarded by the gate's lock
    int chargedRequests; // guarded by the gate's lock
    boolean released; // guarded by the gate's lock
    boolean admittedOnce; // guarded by the gate's lock
    /** The capacity bin holding its tokens while admitted: a worker id, or the fleet's bin. */
    String holder; // guarded by the gate's lock
    /** The worker whose prefix cache its prompt went to, when not its holder (a PD request's prefill worker), or null. */
    volatile String prefixWorker;
    /** Admitted by starvation promotion: it may use capacity held back for higher classes wherever it moves. */
    boolean promoted; // guarded by the gate's lock
    /** The prefix holder it waits (or waited) for before it may go elsewhere ({@link Placement}), or null. */
    String holderWaitFor; // guarded by the gate's lock
    /** When its wait for {@link #holderWaitFor} ends; meaningful only when that is set. */
    long holderWaitUntilNanos; // guarded by the gate's lock

    /**
     * @param costTokens the tokens the request holds in flight while admitted (input plus reserved output)
     * @param inputTokens its input tokens (charged as service when admitted)
     * @param cachedTokensOn worker id to the tokens of its prompt cached there (locality), or null
     */
    public QosTicket(TenantSpec tenant, PriorityClass priority, long costTokens, long inputTokens,
            ToLongFunction<String> cachedTokensOn, Callbacks callbacks) {
        this(tenant, priority, costTokens, inputTokens, cachedTokensOn, null, callbacks);
    }

    /**
     * @param candidates the ids of the workers that may serve the request (its model's usable pool), each holding
     *     the gate's per-worker capacity; null to count it against the fleet-wide capacity instead
     */
    public QosTicket(TenantSpec tenant, PriorityClass priority, long costTokens, long inputTokens,
            ToLongFunction<String> cachedTokensOn, Supplier<? extends Collection<String>> candidates, Callbacks callbacks) {
        this.candidates = candidates;
        this.tenant = Objects.requireNonNull(tenant, "tenant");
        this.priority = Objects.requireNonNull(priority, "priority");
        this.costTokens = Math.max(1, costTokens);
        this.inputTokens = Math.max(0, inputTokens);
        this.cachedTokensOn = cachedTokensOn;
        this.callbacks = Objects.requireNonNull(callbacks, "callbacks");
    }

    public TenantSpec tenant() {
        return tenant;
    }

    public PriorityClass priority() {
        return priority;
    }

    public long costTokens() {
        return costTokens;
    }

    long cachedOn(String workerId) {
        return cachedTokensOn == null || workerId == null ? 0 : cachedTokensOn.applyAsLong(workerId);
    }

    @Override
    public String toString() {
        return "QosTicket[" + tenant.name() + "/" + priority.label() + " cost=" + costTokens + " state=" + state.get() + "]";
    }
}
