package io.kvroute.scheduler.queue;

/**
 * The two priorities, kept apart as in LightLLM's
 * {@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/}. {@code high_priority_request} is an admission flag
 * (queue insertion before the first normal request). {@code infer_high_priority} is internal to the
 * engine: clients cannot set it, and only PD continuation segments ({@code segment_index > 0}) get
 * it; a first segment is never promoted, even on a prefix-cache hit.
 */
public final class Priorities {

    /** Inference priority given to continuation segments (LightLLM uses -1). */
    public static final int CONTINUATION_INFER_PRIORITY = -1;

    private Priorities() {}

    public static int inferHighPriority(int segmentIndex) {
        return segmentIndex > 0 ? CONTINUATION_INFER_PRIORITY : 0;
    }

    public static boolean admissionHighPriority(boolean requested, int segmentIndex) {
        return requested || segmentIndex > 0;
    }
}
