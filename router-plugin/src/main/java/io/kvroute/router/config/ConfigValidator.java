package io.kvroute.router.config;

import io.kvroute.router.policy.Policies;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Startup validation. Numeric checks come before policy checks, so a value that is wrong under
 * every policy is reported as itself. Every message names the flag and the offending value.
 */
public final class ConfigValidator {

    private ConfigValidator() {}

    static void validate(RouterConfig.Builder b) {
        if (b.port < 0 || b.port > 65535) {
            throw fail("--port", b.port, "must be between 0 and 65535");
        }
        if (b.host == null || b.host.isBlank()) {
            throw fail("--host", b.host, "must not be empty");
        }
        if (b.maxBodyBytes < 1) {
            throw fail("--max-body-bytes", b.maxBodyBytes, "must be at least 1");
        }
        positive("--request-timeout-secs", b.requestTimeoutSecs);
        positive("--connect-timeout-secs", b.connectTimeoutSecs);
        positive("--stream-idle-timeout-secs", b.streamIdleTimeoutSecs);
        positive("--health-check-interval-secs", b.healthCheckIntervalSecs);
        positive("--load-freshness-secs", b.loadFreshnessSecs);
        positive("--health-check-timeout-secs", b.healthCheckTimeoutSecs);
        if (b.healthFailureThreshold < 1) {
            throw fail("--health-failure-threshold", b.healthFailureThreshold, "must be at least 1");
        }
        if (b.healthSuccessThreshold < 1) {
            throw fail("--health-success-threshold", b.healthSuccessThreshold, "must be at least 1");
        }
        if (b.retryMaxAttempts < 1) {
            throw fail("--retry-max-attempts", b.retryMaxAttempts, "must be at least 1");
        }
        if (b.retryInitialBackoffMs < 0) {
            throw fail("--retry-initial-backoff-ms", b.retryInitialBackoffMs, "must be >= 0");
        }
        if (b.retryMaxBackoffMs < b.retryInitialBackoffMs) {
            throw fail("--retry-max-backoff-ms", b.retryMaxBackoffMs, "must be >= --retry-initial-backoff-ms (" + b.retryInitialBackoffMs + ")");
        }
        if (!(b.retryBackoffMultiplier >= 1) || Double.isInfinite(b.retryBackoffMultiplier)) {
            throw fail("--retry-backoff-multiplier", b.retryBackoffMultiplier, "must be >= 1");
        }
        if (!(b.retryJitter >= 0 && b.retryJitter <= 1)) {
            throw fail("--retry-jitter", b.retryJitter, "must be between 0 and 1");
        }
        if (b.cbFailureThreshold < 1) {
            throw fail("--cb-failure-threshold", b.cbFailureThreshold, "must be at least 1");
        }
        if (b.cbSuccessThreshold < 1) {
            throw fail("--cb-success-threshold", b.cbSuccessThreshold, "must be at least 1");
        }
        positive("--cb-timeout-secs", b.cbTimeoutSecs);
        if (!(b.shutdownDrainSecs >= 0) || Double.isInfinite(b.shutdownDrainSecs)) {
            throw fail("--shutdown-drain-secs", b.shutdownDrainSecs, "must be >= 0");
        }
        if (b.adminApiKey != null && b.adminApiKey.length() < 8) {
            throw new ConfigException("--admin-api-key must be at least 8 characters (value not shown)");
        }
        if (b.apiKey != null && b.apiKey.isEmpty()) {
            throw new ConfigException("--api-key must not be empty (value not shown)");
        }
        if (b.minLoadChoices < 1) {
            throw fail("--min-load-choices", b.minLoadChoices, "must be at least 1");
        }
        for (String url : b.workerUrls) {
            String problem = urlProblem(url);
            if (problem != null) {
                throw fail("--worker-urls", url, problem);
            }
        }
        for (String entry : b.tokenizerPaths) {
            int eq = entry.indexOf('=');
            String dir = eq < 0 ? entry : entry.substring(eq + 1);
            if (eq == 0 || dir.isBlank() || !java.nio.file.Files.isRegularFile(java.nio.file.Path.of(dir).resolve("tokenizer.json"))) {
                throw fail("--tokenizer-path", entry, "must be DIR or MODEL=DIR where DIR holds tokenizer.json");
            }
        }
        if (!(b.pdBusyRetryTimeoutSecs >= 0) || Double.isInfinite(b.pdBusyRetryTimeoutSecs)) {
            throw fail("--pd-busy-retry-timeout-secs", b.pdBusyRetryTimeoutSecs, "must be >= 0 (0 turns busy retry off)");
        }
        for (String entry : b.prefillUrls) {
            int eq = entry.lastIndexOf('=');
            String url = eq < 0 ? entry : entry.substring(0, eq);
            String problem = urlProblem(url);
            if (problem != null) {
                throw fail("--prefill-urls", entry, problem);
            }
            if (eq >= 0) {
                try {
                    int port = Integer.parseInt(entry.substring(eq + 1));
                    if (port < 1 || port > 65535) {
                        throw fail("--prefill-urls", entry, "bootstrap port must be 1..65535");
                    }
                } catch (NumberFormatException e) {
                    throw fail("--prefill-urls", entry, "bootstrap port must be a number");
                }
            }
        }
        for (String url : b.decodeUrls) {
            String problem = urlProblem(url);
            if (problem != null) {
                throw fail("--decode-urls", url, problem);
            }
        }
        if (b.prefillUrls.isEmpty() != b.decodeUrls.isEmpty()) {
            throw new ConfigException("--prefill-urls and --decode-urls go together: PD needs at least one of each (got "
                    + b.prefillUrls.size() + " prefill, " + b.decodeUrls.size() + " decode)");
        }
        if (b.prefillPolicy != null && !Policies.NAMES.contains(b.prefillPolicy.toLowerCase(Locale.ROOT))) {
            throw fail("--prefill-policy", b.prefillPolicy, "is not one of: " + String.join(", ", Policies.NAMES));
        }
        if (!Policies.NAMES.contains(b.decodePolicy.toLowerCase(Locale.ROOT))) {
            throw fail("--decode-policy", b.decodePolicy, "is not one of: " + String.join(", ", Policies.NAMES));
        }
        if (!Policies.NAMES.contains(b.policy.toLowerCase(Locale.ROOT))) {
            throw fail("--policy", b.policy, "is not one of: " + String.join(", ", Policies.NAMES));
        }
    }

    /** Null when {@code url} is an http(s) URL with a host and no query; a reason otherwise. */
    public static String urlProblem(String url) {
        if (url == null || url.isBlank()) {
            return "must not be empty";
        }
        try {
            URI uri = new URI(url.trim());
            String scheme = uri.getScheme();
            if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
                return "must be an http:// or https:// URL";
            }
            if (uri.getHost() == null || uri.getHost().isBlank()) {
                return "must name a host";
            }
            if (uri.getQuery() != null || uri.getFragment() != null || uri.getUserInfo() != null) {
                return "must not carry a query, fragment or credentials";
            }
            return null;
        } catch (URISyntaxException e) {
            return "is not a valid URL (" + e.getReason() + ")";
        }
    }

    private static void positive(String flag, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw fail(flag, value, "must be a positive number");
        }
    }

    private static ConfigException fail(String flag, Object value, String problem) {
        return new ConfigException(flag + " " + problem + " (got '" + value + "')");
    }
}
