package io.kvroute.router.config;

import io.kvroute.router.policy.Policies;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;

/**
 * Startup validation. Numeric checks come before policy checks, so a value that is wrong under
 * every policy is reported as itself. Every message names the flag and the offending value.
 */
public final class ConfigValidator {

    private ConfigValidator() {}

    /** Validates everything; returns the parsed service discovery settings. */
    static ServiceDiscoveryConfig validate(RouterConfig.Builder b) {
        if (b.port < 0 || b.port > 65535) {
            throw fail("--port", b.port, "must be between 0 and 65535");
        }
        if (b.metricsPort != null && (b.metricsPort < 0 || b.metricsPort > 65535)) {
            throw fail("--metrics-port", b.metricsPort, "must be between 0 and 65535");
        }
        if (b.metricsPort != null && b.metricsPort != 0 && b.metricsPort == b.port) {
            throw fail("--metrics-port", b.metricsPort, "must differ from --port");
        }
        if (b.host == null || b.host.isBlank()) {
            throw fail("--host", b.host, "must not be empty");
        }
        if (b.maxBodyBytes < 1) {
            throw fail("--max-body-bytes", b.maxBodyBytes, "must be at least 1");
        }
        if (b.maxN < 1 || b.maxN > 65_536) {
            throw fail("--max-n", b.maxN, "must be between 1 and 65536");
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
        if (!Policies.NAMES.contains(b.policy.toLowerCase(Locale.ROOT))) {
            throw fail("--policy", b.policy, "is not one of: " + String.join(", ", Policies.NAMES));
        }
        validateCacheAwarePolicy(b);
        return ServiceDiscoveryValidator.validate(b);
    }



    /**
     * Every cache flag changed from its default needs a policy that really runs cache_aware: {@code --policy},
     * the PD prefill policy ({@code --prefill-policy}, which defaults to {@code --policy}), or the fallback of
     * either when it is {@code sticky}.
     */
    private static void validateCacheAwarePolicy(RouterConfig.Builder b) {
        String prefillPolicy = b.pd.prefillPolicy() == null ? b.policy : b.pd.prefillPolicy();
        if (runsCacheAware(b.policy, b) || runsCacheAware(prefillPolicy, b)) {
            return;
        }
        String tuned = SettingsBinder.firstChangedFlag(b.cacheAware, CacheAwareSettings.DEFAULTS);
        if (tuned != null) {
            throw new ConfigException(tuned + " requires --policy cache_aware or --prefill-policy cache_aware (got --policy "
                    + b.policy + (b.pd.prefillPolicy() == null ? "" : ", --prefill-policy " + b.pd.prefillPolicy()) + ")");
        }
    }

    /** True when {@code name} builds a cache_aware instance: itself, or sticky over a cache_aware fallback. */
    private static boolean runsCacheAware(String name, RouterConfig.Builder b) {
        return "cache_aware".equalsIgnoreCase(name)
                || ("sticky".equalsIgnoreCase(name) && "cache_aware".equalsIgnoreCase(b.session.fallbackPolicy()));
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

    static ConfigException fail(String flag, Object value, String problem) {
        return new ConfigException(flag + " " + problem + " (got '" + value + "')");
    }
}
