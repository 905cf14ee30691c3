package io.kvroute.router.tenant;

/**
 * What the QoS layer reports (metrics). Called without any QoS lock held; must not block. Tenant
 * names arrive as they are: bounding the label set is the listener's job.
 */
public interface QosListener {

    QosListener NONE = new QosListener() {};

    /** A request waited {@code waitNanos} (0 when admitted on arrival) and was admitted. */
    default void admitted(String tenant, PriorityClass c, long waitNanos, boolean promoted) {}

    /** A request was refused: {@code reason} is queue_full, queue_timeout, no_worker or a rate-limit reason. */
    default void shed(String tenant, PriorityClass c, String reason) {}

    /** A request was preempted before its first byte by a request of a higher class. */
    default void preempted(String tenant, PriorityClass c) {}

    /** {@code weightedTokens} of service charged to a tenant (negative for a refund). */
    default void service(String tenant, PriorityClass c, double weightedTokens) {}

    /** Locality inside the fairness slack picked a tenant other than the one with the minimum counter. */
    default void localityPick(PriorityClass c) {}
}
