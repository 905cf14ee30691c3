package io.kvroute.router.config;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * Startup validation of the rules that span settings records (a cache flag needs a cache-aware
 * policy; service discovery excludes static worker lists), and the shared wording of every
 * message: the flag and the offending value. Each record checks its own flags when it is built.
 */
public final class ConfigValidator {

    private ConfigValidator() {}

    /**
     * The rules that span several settings records (each record checks its own flags when built);
     * returns the resolved service discovery settings.
     */
    static ServiceDiscoveryConfig validate(RouterConfig.Builder b) {
        validateCacheAwarePolicy(b);
        return ServiceDiscoveryValidator.validate(b.discovery, b.routing, b.pd);
    }

    /**
     * Every cache flag changed from its default needs a policy that really runs cache_aware: {@code --policy},
     * the PD prefill policy ({@code --prefill-policy}, which defaults to {@code --policy}), or the fallback of
     * either when it is {@code sticky}.
     */
    private static void validateCacheAwarePolicy(RouterConfig.Builder b) {
        String policy = b.routing.policy();
        String prefillPolicy = b.pd.prefillPolicy() == null ? policy : b.pd.prefillPolicy();
        if (runsCacheAware(policy, b) || runsCacheAware(prefillPolicy, b)) {
            return;
        }
        String tuned = SettingsBinder.firstChangedFlag(b.cacheAware, CacheAwareSettings.DEFAULTS);
        if (tuned != null) {
            throw new ConfigException(tuned + " requires --policy cache_aware or --prefill-policy cache_aware (got --policy "
                    + policy + (b.pd.prefillPolicy() == null ? "" : ", --prefill-policy " + b.pd.prefillPolicy()) + ")");
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

    static ConfigException fail(String flag, Object value, String problem) {
        return new ConfigException(flag + " " + problem + " (got '" + value + "')");
    }
}
