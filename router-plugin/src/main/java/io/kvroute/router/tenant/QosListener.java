package io.kvroute.router.tenant;

/**
 * What the QoS layer reports (metrics). Called without any QoS lock held; must not block. Tenant
 * names arrive as they are: bounding the label set is the listener's job.
 */
public interface QosListener {

    QosListener NONE = new QosListener() {};

    /** A request waited {@code waitNanos} (0 when admitted on arrival) and was admitted. */
    default void admitted(String tenant, PriorityClass c, long waitNanos, boolean promoted) {}

    /**
     * A request started waiting in the router-side queue (it leaves it admitted, refused, or with its client). The
     * gate's counts say how many wait ({@link QosGate#queued(PriorityClass, String)}); this says which tenants to ask.
     */
    default void waiting(String tenant, PriorityClass c) {}

    /** A request was refused: {@code reason} is queue_full, queue_timeout, no_worker or a rate-limit reason. */
    default void shed(String tenant, PriorityClass c, String reason) {}

    /**
     * A request of class {@code c} was preempted before its first byte to make room for an arriving request of class
     * {@code by} (a higher class that may preempt): the one way the gate preempts.
     */
    default void preempted(String tenant, PriorityClass c, PriorityClass by) {}

    /** {@code weightedTokens} of service charged to a tenant (negative for a refund). */
    default void service(String tenant, PriorityClass c, double weightedTokens) {}

    /** {@link #holderWait} outcome: admitted onto the prefix holder it waited for. */
    String HOLDER_WAIT_ON_HOLDER = "holder";
    /** {@link #holderWait} outcome: the wait's bound passed and it was admitted onto another worker. */
    String HOLDER_WAIT_BOUND_PASSED = "bound_passed";
    /** {@link #holderWait} outcome: refused (queue timeout, no worker) or its client left while it waited. */
    String HOLDER_WAIT_GONE = "gone";

    /**
     * A request of class {@code c} that waited for its prefix holder ({@code --qos-holder-wait-ms}) left the queue;
     * {@code outcome} is one of the {@code HOLDER_WAIT_*} labels.
     */
    default void holderWait(PriorityClass c, String outcome) {}

    /** Locality inside the fairness slack picked a tenant other than the one with the minimum counter. */
    default void localityPick(PriorityClass c) {}
}
