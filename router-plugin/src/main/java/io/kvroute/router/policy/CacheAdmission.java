package io.kvroute.router.policy;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.load.WorkerLoad;
import java.util.Optional;

/**
 * The per-worker checks of the cache-aware admission ladder (SGLang's router,
 * {@code experimental/sgl-router/src/policies/admission.rs}), stateless and pure.
 *
 * <p>Polarity matters: the queue gate and hard admission FAIL OPEN (no fresh sample admits, an
 * unknown capacity of 0 admits), so a silent load plane never blocks cache affinity, except that
 * the queue gate treats a stale {@code /metrics} scrape as saturated (llm-d's rule); the
 * saturation pin's fleet scan ({@link EngineLoadSnapshot#anyFreshQueueBelow}) FAILS CLOSED.
 */
final class CacheAdmission {
    private CacheAdmission() {}

    /**
     * Queue gate: admits with no limit (0), no snapshot, no fresh sample, or {@code waiting < limit};
     * rejects a scraped worker whose reading is stale ({@link EngineLoadSnapshot#countsAsSaturated}).
     */
    static boolean queueGateAdmits(EngineLoadSnapshot loads, String workerId, int limit) {
        if (limit <= 0 || loads == null) {
            return true;
        }
        Optional<WorkerLoad> load = loads.fresh(workerId);
        if (load.isEmpty()) {
            return !loads.countsAsSaturated(workerId);
        }
        return load.get().numWaitingReqs() < limit;
    }

    /**
     * Hard admission: admits with no sample; otherwise needs {@code running + 1 <= max_running_requests}
     * and {@code total_tokens + input_tokens <= max_total_num_tokens}, a capacity of 0 meaning unknown.
     */
    static boolean hardAdmits(EngineLoadSnapshot loads, String workerId, long inputTokens) {
        if (loads == null) {
            return true;
        }
        Optional<WorkerLoad> fresh = loads.fresh(workerId);
        if (fresh.isEmpty()) {
            return true;
        }
        WorkerLoad l = fresh.get();
        if (l.maxRunningRequests() > 0 && l.numRunningReqs() + 1L > l.maxRunningRequests()) {
            return false;
        }
        return l.maxTotalNumTokens() <= 0 || l.numTotalTokens() + inputTokens <= l.maxTotalNumTokens();
    }

    /**
     * Pressure guard: true when {@code best} is materially more pressured than {@code rival}: the gap
     * is over the absolute threshold AND {@code best > rel * rival}. Compared in estimated prefill
     * queue ms when both have an estimate, else in waiting uncached tokens when both report the
     * extension; otherwise there is no evidence and the guard does not fire.
     */
    static boolean materiallyLessPressured(WorkerLoad rival, WorkerLoad best, CacheAwareConfig config) {
        if (rival == null || best == null) {
            return false;
        }
        if (rival.estimatedPrefillQueueMs().isPresent() && best.estimatedPrefillQueueMs().isPresent()) {
            double r = rival.estimatedPrefillQueueMs().getAsDouble();
            double b = best.estimatedPrefillQueueMs().getAsDouble();
            return b - r > config.pressureAbsThresholdMs() && b > config.pressureRelThreshold() * r;
        }
        if (rival.hasExtension() && best.hasExtension()) {
            long r = rival.numWaitingUncachedTokens();
            long b = best.numWaitingUncachedTokens();
            return b - r > config.pressureAbsThresholdTokens() && b > config.pressureRelThreshold() * r;
        }
        return false;
    }
}
