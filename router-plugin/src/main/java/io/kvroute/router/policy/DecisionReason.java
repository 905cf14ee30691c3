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
    SINGLE_WORKER("single_worker");

    private final String label;

    DecisionReason(String label) {
        this.label = label;
    }

    /** The metric label value. */
    public String label() {
        return label;
    }
}
