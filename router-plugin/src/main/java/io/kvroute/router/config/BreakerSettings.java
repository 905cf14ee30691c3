package io.kvroute.router.config;

/**
 * The per-worker circuit breaker: consecutive failures open it, after an open time trial traffic
 * is let through (half-open), and consecutive successes close it. Handed to {@code worker/Breakers}.
 */
public record BreakerSettings(
        @Setting(name = "cb-failure-threshold", defaultValue = "10", min = 1,
                description = "Consecutive failures that open a worker's breaker")
        int failureThreshold,
        @Setting(name = "cb-success-threshold", defaultValue = "3", min = 1,
                description = "Consecutive half-open successes that close it")
        int successThreshold,
        @Setting(name = "cb-timeout-secs", defaultValue = "60", positive = true,
                description = "Open time before half-open trial traffic")
        double timeoutSecs,
        @Setting(name = "disable-circuit-breaker", defaultValue = "false",
                description = "Turn the per-worker circuit breakers off")
        boolean disabled) {

    public static final BreakerSettings DEFAULTS = SettingsBinder.defaults(BreakerSettings.class);

    public long openNanos() {
        return (long) (timeoutSecs * 1e9);
    }
}
