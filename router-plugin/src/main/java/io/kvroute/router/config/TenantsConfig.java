package io.kvroute.router.config;

/**
 * Tenants and QoS settings, one value on {@link RouterConfig}; validates itself and names the flag
 * in every error. With no tenants file everything here is off and the request path is today's.
 *
 * @param tenantsFile the tenants YAML file, or null for no tenants ({@code --tenants-file})
 * @param trustedTenantHeader a request header whose value names the tenant, trusted only when set
 *     (for a gateway in front that authenticates); null to identify tenants by API key only
 *     ({@code --trusted-tenant-header})
 * @param workerCapacityTokens tokens in flight (input plus reserved output) one worker is given
 *     before requests wait at the router; 0 for no router-side queue ({@code --qos-worker-capacity-tokens})
 * @param localitySlackTokens the fairness slack Δ within which the tenant whose next request is cached
 *     on the freed worker goes first, in weighted tokens per unit of weight; 0 for pure VTC
 *     ({@code --qos-locality-slack-tokens})
 * @param maxTenantLabels tenants with their own metric label; the rest are labelled {@code other}
 *     ({@code --qos-max-tenant-labels})
 */
public record TenantsConfig(String tenantsFile, String trustedTenantHeader, long workerCapacityTokens,
        double localitySlackTokens, int maxTenantLabels) {

    public static final long DEFAULT_LOCALITY_SLACK_TOKENS = 2048;
    public static final int DEFAULT_MAX_TENANT_LABELS = 50;
    /** Everything off. */
    public static final TenantsConfig OFF = new TenantsConfig(null, null, 0, DEFAULT_LOCALITY_SLACK_TOKENS,
            DEFAULT_MAX_TENANT_LABELS);

    public TenantsConfig {
        if (tenantsFile != null && tenantsFile.isBlank()) {
            throw new ConfigException("--tenants-file must be a file path (got '" + tenantsFile + "')");
        }
        if (trustedTenantHeader != null && !trustedTenantHeader.matches("[A-Za-z0-9-]{1,64}")) {
            throw new ConfigException("--trusted-tenant-header must be a header name (got '" + trustedTenantHeader + "')");
        }
        if (workerCapacityTokens < 0 || workerCapacityTokens > (1L << 40)) {
            throw new ConfigException("--qos-worker-capacity-tokens must be within 0..2^40 (got '" + workerCapacityTokens + "')");
        }
        if (!(localitySlackTokens >= 0) || localitySlackTokens > 1e12) {
            throw new ConfigException("--qos-locality-slack-tokens must be within 0..1e12 (got '" + localitySlackTokens + "')");
        }
        if (maxTenantLabels < 0 || maxTenantLabels > 10_000) {
            throw new ConfigException("--qos-max-tenant-labels must be within 0..10000 (got '" + maxTenantLabels + "')");
        }
        if (tenantsFile == null && (trustedTenantHeader != null || workerCapacityTokens > 0)) {
            throw new ConfigException((trustedTenantHeader != null ? "--trusted-tenant-header" : "--qos-worker-capacity-tokens")
                    + " needs --tenants-file");
        }
    }

    public boolean enabled() {
        return tenantsFile != null;
    }

    public boolean queueEnabled() {
        return workerCapacityTokens > 0;
    }
}
