package io.kvroute.router.config;

/**
 * The active health probe of every worker ({@code GET /health}): how often, how long one probe may
 * take, and how many consecutive results flip a worker's state. Handed to {@code worker/HealthChecker}.
 */
public record HealthSettings(
        @Setting(name = "health-check-interval-secs", defaultValue = "10", positive = true,
                description = "Active /health probe interval")
        double intervalSecs,
        @Setting(name = "health-check-timeout-secs", defaultValue = "5", positive = true,
                description = "Active /health probe timeout")
        double timeoutSecs,
        @Setting(name = "health-failure-threshold", defaultValue = "3", min = 1,
                description = "Consecutive failed probes to mark unhealthy")
        int failureThreshold,
        @Setting(name = "health-success-threshold", defaultValue = "2", min = 1,
                description = "Consecutive good probes to mark healthy")
        int successThreshold,
        @Setting(name = "health-check-path", defaultValue = "/health",
                description = "Path of the health probe on every worker: vLLM and SGLang answer /health; SGLang's "
                        + "/health_generate also runs a one-token generation, and gateways in front of engines may differ")
        String checkPath) {

    public HealthSettings {
        if (!checkPath.startsWith("/")) {
            throw ConfigValidator.fail("--health-check-path", checkPath, "must start with /");
        }
    }

    public static final HealthSettings DEFAULTS = SettingsBinder.defaults(HealthSettings.class);

    public long intervalMillis() {
        return (long) (intervalSecs * 1000);
    }

    public long timeoutMillis() {
        return (long) (timeoutSecs * 1000);
    }
}
