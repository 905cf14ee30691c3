package io.kvroute.mock.engine;

import java.util.Objects;

/**
 * One generation request as the engine sees it.
 *
 * @param requestId unique id (the HTTP layer assigns one when the client gives none)
 * @param inputIds prompt token ids (never empty)
 * @param maxNewTokens output budget, at least 1
 * @param ignoreEos when false the engine may stop early; the mock always generates the full budget
 * @param highPriorityRequest admission flag: queue before the first normal request
 * @param segmentIndex PD continuation segment index (0 = first segment)
 * @param priority the request's {@code priority} in the scheduler's normal form, lower first (0 when it
 *     names none; see {@code io.kvroute.scheduler.queue.Priorities#requestPriority}); used only when the
 *     engine runs priority scheduling
 */
public record EngineRequest(
        String requestId,
        int[] inputIds,
        int maxNewTokens,
        boolean ignoreEos,
        boolean highPriorityRequest,
        int segmentIndex,
        int priority) {

    /** A request without a priority (0). */
    public EngineRequest(String requestId, int[] inputIds, int maxNewTokens, boolean ignoreEos,
            boolean highPriorityRequest, int segmentIndex) {
        this(requestId, inputIds, maxNewTokens, ignoreEos, highPriorityRequest, segmentIndex, 0);
    }

    public EngineRequest {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(inputIds, "inputIds");
        if (maxNewTokens < 1) {
            throw new IllegalArgumentException("maxNewTokens must be >= 1: " + maxNewTokens);
        }
    }
}
