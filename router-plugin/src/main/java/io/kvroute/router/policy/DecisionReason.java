package io.kvroute.router.policy;

/**
 * Why a policy chose its worker: one value per exit of every policy, so that
 * {@code kvroute_policy_decisions_total{policy,reason}} tells a dashboard which branch ran.
 */
public enum DecisionReason {
    /** round_robin: the next worker in rotation. */
    ROUND_ROBIN("round_robin"),
    /** random: a uniform pick. */
    RANDOM("random"),
    /** power_of_two / min-load-choices: the least loaded of k sampled workers. */
    MIN_LOAD_CHOICES("min_load_choices"),
    /** Only one worker could serve the request. */
    SINGLE_WORKER("single_worker"),
    /** cache_aware: the best-ranked owner (longest match) passed gate and admission and won. */
    CACHE_PRIMARY("cache_primary"),
    /**
     * cache_aware: a better-ranked owner was rejected (queue gate or capacity), so the next admitted
     * owner won (upstream BackupPrimaryAdmission).
     */
    CACHE_BACKUP_ADMISSION("cache_backup_admission"),
    /**
     * cache_aware: a rival owner within {@code --cache-switch-margin-tokens} was materially less
     * pressured and displaced the least-uncached owner (upstream BackupPressureGuard).
     */
    CACHE_PRESSURE_GUARD("cache_pressure_guard"),
    /**
     * cache_aware, floor unset: the gate rejected every owner and every fleet worker is fresh at or
     * over the limit, so the owners were re-admitted and the least uncached work won.
     */
    FLEET_SATURATION_OWNER("fleet_saturation_owner"),
    /** cache_aware: {@code --saturation-queue-floor} pinned the request to the least-pressured queued owner. */
    SATURATION_PIN("saturation_pin"),
    /** cache_aware: no owner met the match thresholds; min-load choices over gate-admitted workers. */
    CACHE_MISS_MIN_LOAD("cache_miss_min_load"),
    /**
     * cache_aware: owners existed but none passed gate + admission and no tier kept the prefix;
     * min-load choices over gate-admitted workers (upstream CapacityFallbackPowerOfTwo).
     */
    CAPACITY_FALLBACK_MIN_LOAD("capacity_fallback_min_load"),
    /** cache_aware: every routable worker is gate-rejected; min-load choices over the whole pool. */
    ALL_QUEUED_MIN_LOAD("all_queued_min_load"),
    /** sticky / session header: the session's worker is still routable and admitted. */
    STICKY_SESSION("sticky_session");

    private final String label;

    DecisionReason(String label) {
        this.label = label;
    }

    /** The metric label value. */
    public String label() {
        return label;
    }
}
