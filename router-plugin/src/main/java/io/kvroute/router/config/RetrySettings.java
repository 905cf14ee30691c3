package io.kvroute.router.config;

/**
 * How a plain request is retried on another worker after a connect failure, reset, timeout or a
 * 429/502/503/504 before any byte reached the client: attempts and exponential backoff with jitter.
 * Handed to {@code dispatch/RetryRule}.
 */
public record RetrySettings(
        @Setting(name = "retry-max-attempts", defaultValue = "3", min = 1,
                description = "Attempts per request, the first included; 1 disables retries")
        int maxAttempts,
        @Setting(name = "retry-initial-backoff-ms", defaultValue = "50", min = 0,
                description = "Backoff before the first retry")
        long initialBackoffMs,
        @Setting(name = "retry-max-backoff-ms", defaultValue = "30000", min = 0,
                description = "Backoff ceiling")
        long maxBackoffMs,
        @Setting(name = "retry-backoff-multiplier", defaultValue = "1.5", min = 1,
                description = "Backoff growth per retry")
        double backoffMultiplier,
        @Setting(name = "retry-jitter", defaultValue = "0.2", min = 0, max = 1,
                description = "Relative jitter applied to each backoff, 0..1")
        double jitter) {

    public RetrySettings {
        if (maxBackoffMs < initialBackoffMs) {
            throw ConfigValidator.fail("--retry-max-backoff-ms", maxBackoffMs,
                    "must be >= --retry-initial-backoff-ms (" + initialBackoffMs + ")");
        }
    }

    public static final RetrySettings DEFAULTS = SettingsBinder.defaults(RetrySettings.class);
}
