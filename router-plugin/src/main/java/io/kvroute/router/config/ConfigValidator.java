package io.kvroute.router.config;

import io.kvroute.router.policy.Policies;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Startup validation. Numeric checks come before policy checks, so a value that is wrong under
 * every policy is reported as itself. Every message names the flag and the offending value.
 */
final class ConfigValidator {

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
        positive("--health-check-interval-secs", b.healthCheckIntervalSecs);
        positive("--health-check-timeout-secs", b.healthCheckTimeoutSecs);
        if (b.healthFailureThreshold < 1) {
            throw fail("--health-failure-threshold", b.healthFailureThreshold, "must be at least 1");
        }
        if (b.healthSuccessThreshold < 1) {
            throw fail("--health-success-threshold", b.healthSuccessThreshold, "must be at least 1");
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
