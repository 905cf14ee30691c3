package io.kvroute.scheduler.queue;

/**
 * The two priorities, kept apart as in LightLLM's
 * {@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/}. {@code high_priority_request} is an admission flag
 * (queue insertion before the first normal request). {@code infer_high_priority} is internal to the
 * engine: clients cannot set it, and only PD continuation segments ({@code segment_index > 0}) get
 * it; a first segment is never promoted, even on a prefix-cache hit.
 *
 * <p>A third, separate priority is the client's request {@code priority} field of vLLM and SGLang,
 * honoured only when the engine runs priority scheduling (vLLM {@code --scheduling-policy priority},
 * SGLang {@code --enable-priority-scheduling}): waiting requests are served by it first and by the
 * strategy's order within one value. vLLM serves lower values first
 * ({@code vllm/v1/core/sched/request_queue.py}, {@code PriorityRequestQueue}); SGLang higher values
 * unless {@code --schedule-low-priority-values-first} ({@code srt/managers/schedule_policy.py},
 * {@code priority_sign}). {@link #requestPriority} turns either into one normal form, lower first.
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

    /**
     * A request's {@code priority} field in the normal form the scheduler orders by (lower first).
     *
     * @param lowValuesFirst true for vLLM's sense (and SGLang's {@code --schedule-low-priority-values-first}),
     *     false for SGLang's default, where a higher value is served earlier
     */
    public static int requestPriority(int value, boolean lowValuesFirst) {
        if (lowValuesFirst) {
            return value;
        }
        return value == Integer.MIN_VALUE ? Integer.MAX_VALUE : -value;
    }
}
