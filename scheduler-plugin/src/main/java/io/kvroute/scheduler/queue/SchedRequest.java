package io.kvroute.scheduler.queue;

import static java.util.Objects.requireNonNull;

/**
 * The scheduling state of one request inside an engine, as the queue strategies and the batch
 * selector see it.
 *
 * <p>Invariants: {@code cachedLen <= kvLen <= inputLen}; {@code cachedLen < inputLen} (at least one
 * prompt token is always computed, so prefill always produces the first output token); the
 * priorities are fixed at construction by {@link Priorities} and a client can never choose
 * {@link #inferHighPriority()}. A request is a <em>decode</em> request when at most one prompt token
 * lacks KV ({@code kvLen + 1 >= inputLen}): LightLLM's {@code cur_kv_len + 1 == total_len}
 * ({@code base_backend.py} {@code _get_classed_reqs}), so a full prefix hit (one uncached token) or a
 * prompt whose last chunk left one token is computed by the decode forward, which also emits the
 * first output token. {@link #arrivalSeq()} is an integer that grows with arrival (LightLLM's
 * request id); every strategy breaks ties by it.
 *
 * <p>Concurrency: not thread-safe. The engine thread owns the progress fields ({@link
 * #admitWithCachedLen}, {@link #advancePrefill}, {@link #addOutputToken}); strategies only read.
 * The one exception is the HRRN service-cost slot, a package-private write-once memo owned by
 * {@link HrrnStrategy}: it is set at most once, on the request's first HRRN ordering, and affects
 * nothing but HRRN keys (see {@link HrrnStrategy} for why it lives here rather than in a map).
 */
public final class SchedRequest {

    private final String requestId;
    private final long arrivalSeq;
    private final int inputLen;
    private final int maxNewTokens;
    private final int segmentIndex;
    private final boolean highPriorityRequest;
    private final int inferHighPriority;
    private final long arrivalProcessedTokens;

    private int cachedLen;
    private int kvLen;
    private int outputLen;
    /** HRRN service cost in tokens; 0 = not yet bound. Written once by {@link HrrnStrategy}. */
    private int hrrnUncachedTokens;
    private final int requestPriority;

    private SchedRequest(String requestId, long arrivalSeq, int inputLen, int maxNewTokens, int segmentIndex,
            boolean highPriorityRequest, int inferHighPriority, long arrivalProcessedTokens, int requestPriority) {
        this.requestPriority = requestPriority;
        this.requestId = requireNonNull(requestId, "requestId");
        this.arrivalSeq = arrivalSeq;
        if (inputLen < 1) {
            throw new IllegalArgumentException("inputLen must be >= 1: " + inputLen);
        }
        if (maxNewTokens < 1) {
            throw new IllegalArgumentException("maxNewTokens must be >= 1: " + maxNewTokens);
        }
        if (segmentIndex < 0) {
            throw new IllegalArgumentException("segmentIndex must be >= 0: " + segmentIndex);
        }
        this.inputLen = inputLen;
        this.maxNewTokens = maxNewTokens;
        this.segmentIndex = segmentIndex;
        this.highPriorityRequest = highPriorityRequest;
        this.inferHighPriority = inferHighPriority;
        this.arrivalProcessedTokens = arrivalProcessedTokens;
    }

    /**
     * Builds a request, applying the priority rules: a PD continuation segment
     * ({@code segmentIndex > 0}) is always admission-high-priority and gets inference priority -1;
     * a first segment keeps the caller's admission flag and inference priority 0.
     *
     * @param arrivalSeq grows with arrival at the engine (the tie-breaker of every strategy)
     * @param arrivalProcessedTokens the engine's processed-prefill-token counter right now
     */
    public static SchedRequest create(String requestId, long arrivalSeq, int inputLen, int maxNewTokens,
            boolean highPriorityRequest, int segmentIndex, long arrivalProcessedTokens) {
        return create(requestId, arrivalSeq, inputLen, maxNewTokens, highPriorityRequest, segmentIndex,
                arrivalProcessedTokens, 0);
    }

    /**
     * As above, with the client's request priority in the engine's normal form (lower is served
     * earlier, 0 when the request names none; see {@link Priorities#requestPriority}).
     */
    public static SchedRequest create(String requestId, long arrivalSeq, int inputLen, int maxNewTokens,
            boolean highPriorityRequest, int segmentIndex, long arrivalProcessedTokens, int requestPriority) {
        return new SchedRequest(requestId, arrivalSeq, inputLen, maxNewTokens, segmentIndex,
                Priorities.admissionHighPriority(highPriorityRequest, segmentIndex),
                Priorities.inferHighPriority(segmentIndex), arrivalProcessedTokens, requestPriority);
    }

    public String requestId() { return requestId; }
    /** Arrival order at the engine: smaller arrived earlier. */
    public long arrivalSeq() { return arrivalSeq; }
    public int inputLen() { return inputLen; }
    public int maxNewTokens() { return maxNewTokens; }
    public int segmentIndex() { return segmentIndex; }
    /** Admission flag: queued before the first normal request. */
    public boolean highPriorityRequest() { return highPriorityRequest; }
    /** Internal inference priority: 0 normal, negative = higher (more negative first). */
    public int inferHighPriority() { return inferHighPriority; }
    public long arrivalProcessedTokens() { return arrivalProcessedTokens; }
    /** The request's own priority, lower first (vLLM's sense); used only when priority scheduling is on. */
    public int requestPriority() { return requestPriority; }
    /** Prompt tokens found in the prefix cache at admission. */
    public int cachedLen() { return cachedLen; }
    /** Prompt tokens that have KV (cached + computed so far). */
    public int kvLen() { return kvLen; }
    public int outputLen() { return outputLen; }

    /** At most one prompt token lacks KV: the decode forward computes it (see the class comment). */
    public boolean isDecode() { return kvLen + 1 >= inputLen; }

    /** Prompt tokens still to compute ({@code max(0, input_len - cur_kv_len)}). */
    public int remainingPrefillTokens() { return inputLen - kvLen; }

    public boolean prefillStarted() { return kvLen > cachedLen; }

    public boolean finished() { return outputLen >= maxNewTokens; }

    /** Records the prefix-cache hit at admission; capped so at least one token is computed. */
    public void admitWithCachedLen(int cachedTokens) {
        if (kvLen != cachedLen || kvLen != 0) {
            throw new IllegalStateException("already admitted: " + requestId + " kvLen=" + kvLen);
        }
        int capped = Math.max(0, Math.min(cachedTokens, inputLen - 1));
        this.cachedLen = capped;
        this.kvLen = capped;
    }

    /** Adds computed prompt KV after a step executed a chunk of this request. */
    public void advancePrefill(int tokens) {
        if (tokens < 1 || tokens > remainingPrefillTokens()) {
            throw new IllegalStateException("bad prefill advance " + tokens + " for " + this);
        }
        kvLen += tokens;
    }

    public void addOutputToken() {
        if (finished()) {
            throw new IllegalStateException("output beyond budget for " + this);
        }
        outputLen++;
    }

    int hrrnUncachedTokens() { return hrrnUncachedTokens; }

    /** Write-once: binds the HRRN service cost on first use and returns the bound value. */
    int bindHrrnUncachedTokensOnce() {
        if (hrrnUncachedTokens == 0) {
            hrrnUncachedTokens = Math.max(1, inputLen - kvLen);
        }
        return hrrnUncachedTokens;
    }

    @Override
    public String toString() {
        return "SchedRequest[" + requestId + " #" + arrivalSeq + " input=" + inputLen + " cached=" + cachedLen + " kv=" + kvLen
                + " out=" + outputLen + "/" + maxNewTokens + " seg=" + segmentIndex + " hp=" + highPriorityRequest
                + " ihp=" + inferHighPriority + " prio=" + requestPriority + "]";
    }
}
