package io.kvroute.router.accesslog;

import io.kvroute.router.trace.TraceSpan;
import java.util.Objects;

/**
 * What the router decided for one inference request, carried as a request attribute from ingress
 * to Jetty's request log: model, chosen worker(s), policy, decision reason, matched tokens, retries,
 * time to first byte and the trace id.
 *
 * <p>Attached to the Jetty request by {@link AccessLog#attach}; handed to the dispatch core through its
 * client sink. Written by the dispatch of this one request (attempts are sequential, PD legs report through
 * the dispatch), read by the request log after the response completed; fields are volatile so the
 * log thread sees the last write. A request the router rejected before dispatch keeps the defaults.
 */
public final class RouteFacts {

    private final String endpoint;
    private final TraceSpan span;
    private volatile String model;
    private volatile String worker;
    private volatile String prefillWorker;
    private volatile String policy;
    private volatile String reason;
    private volatile long matchedTokens = -1;
    private volatile int retries;
    private volatile long firstByteNanos = -1;
    private volatile int segments;
    private volatile String tenant;
    private volatile String priorityClass;
    private volatile long queueWaitNanos = -1;
    private final String traceId;

    RouteFacts(String endpoint, TraceSpan span) {
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        this.span = Objects.requireNonNull(span, "span");
        this.traceId = span.traceId();
    }

    /** A record for a request whose transport keeps no access log (written to, never read). */
    public static RouteFacts detached(String endpoint) {
        return new RouteFacts(endpoint, TraceSpan.NOOP);
    }

    /** A record for {@code endpoint} whose ingress span is {@code span}. */
    public static RouteFacts of(String endpoint, TraceSpan span) {
        return new RouteFacts(endpoint, span);
    }

    public void model(String model) {
        this.model = model;
        span.tag("model", model);
    }

    /** The request's ingress span ({@link TraceSpan#NOOP} when tracing is off): the parent of its work. */
    public TraceSpan span() {
        return span;
    }

    /**
     * One routing decision: the policy, its reason label, the chosen worker's matched prefix tokens
     * (negative when the policy does not match prefixes) and the worker's URL.
     */
    public void decision(String policy, String reason, long matchedTokens, String workerUrl) {
        this.policy = policy;
        this.reason = reason;
        this.matchedTokens = matchedTokens;
        this.worker = workerUrl;
    }

    /** The request's tenant and effective priority class (only with a tenants file). */
    public void tenant(String tenant, String priorityClass) {
        this.tenant = tenant;
        this.priorityClass = priorityClass;
        span.tag("tenant", tenant).tag("priority_class", priorityClass);
    }

    /** Time the request waited in the router-side queue before it was admitted. */
    public void queueWait(long nanos) {
        this.queueWaitNanos = nanos;
        span.tag("queue_wait_ms", nanos / 1_000_000L);
    }

    public String tenant() {
        return tenant;
    }

    public String priorityClass() {
        return priorityClass;
    }

    /** Negative when the request did not pass the router-side queue. */
    public long queueWaitNanos() {
        return queueWaitNanos;
    }

    /** PD: the prefill leg's worker (the decode worker is {@link #decision}'s). */
    public void prefillWorker(String workerUrl) {
        this.prefillWorker = workerUrl;
    }

    public void retries(int retries) {
        this.retries = retries;
    }

    /** Time from the request's arrival to the first byte (the response head) sent to the client; the first call wins. */
    public void firstByte(long nanosSinceIngress) {
        if (firstByteNanos < 0 && nanosSinceIngress >= 0) {
            firstByteNanos = nanosSinceIngress;
        }
    }

    /** PD: segments the answer took (1 + continuations). */
    public void segments(int segments) {
        this.segments = segments;
    }

    public String endpoint() {
        return endpoint;
    }

    public String model() {
        return model;
    }

    public String worker() {
        return worker;
    }

    public String prefillWorker() {
        return prefillWorker;
    }

    public String policy() {
        return policy;
    }

    public String reason() {
        return reason;
    }

    public long matchedTokens() {
        return matchedTokens;
    }

    public int retries() {
        return retries;
    }

    public long firstByteNanos() {
        return firstByteNanos;
    }

    public int segments() {
        return segments;
    }

    public String traceId() {
        return traceId;
    }
}
