package io.kvroute.router.config;

import io.kvroute.router.tenant.QosGate;

/**
 * Tenants and QoS settings, one value on {@link RouterConfig}, handed to the tenant front door. With
 * no tenants file everything here is off and the request path is today's.
 */
public record TenantsConfig(
        @Setting(name = "tenants-file", defaultValue = Setting.UNSET,
                description = "Tenants YAML file: API key digests to tenants, weights, class ceilings, rate limits, class "
                        + "settings (docs/tenants.md); reloaded on change (default off).")
        String tenantsFile,
        @Setting(name = "trusted-tenant-header", defaultValue = Setting.UNSET,
                description = "Request header naming the tenant, trusted as is: only behind a gateway that sets it "
                        + "(default off: tenants come from API keys).")
        String trustedTenantHeader,
        @Setting(name = "qos-worker-capacity-tokens", defaultValue = "0", min = 0, max = 1L << 40,
                description = "Tokens in flight (input plus reserved output) per usable worker before requests wait at the "
                        + "router per class and tenant; needs --tenants-file; 0 = no router-side queue")
        long workerCapacityTokens,
        @Setting(name = "qos-capacity-scope", defaultValue = "worker", choices = {"worker", "fleet"},
                description = "What --qos-worker-capacity-tokens bounds: each worker's tokens in flight (worker: a request "
                        + "is admitted onto a worker of its pool with room and routed only among such workers) or the "
                        + "fleet's total (fleet: the value times the usable workers, wherever the policy routes)")
        String capacityScope,
        @Setting(name = "qos-holder-wait-ms", defaultValue = "200", min = 0, max = 60_000,
                description = "Per-worker capacity: how long a request whose prefix holder (the worker with the most of "
                        + "its prompt cached) is full waits at the router for it instead of running uncached on another "
                        + "worker with room, when the holder saves at least 256 cached tokens and half the prompt; "
                        + "then it goes anywhere with room; 0 = never wait")
        long holderWaitMillis,
        @Setting(name = "qos-locality-slack-tokens", defaultValue = "2048", min = 0, max = 1e12,
                description = "Fairness slack within which the tenant whose next request is cached on the freed worker goes "
                        + "first, in weighted tokens per unit of weight; 0 is pure VTC")
        double localitySlackTokens,
        @Setting(name = "qos-fairness", defaultValue = "tokens", choices = {"tokens", "requests"},
                description = "What fair share within a class counts per tenant: tokens (weighted input, cached input "
                        + "and streamed output, VTC) or requests (round robin by request count; the locality slack then "
                        + "counts requests)")
        String fairness,
        @Setting(name = "qos-max-tenant-labels", defaultValue = "50", min = 0, max = 10_000,
                description = "Tenants with their own metric label; the others are labelled other")
        int maxTenantLabels,
        @Setting(name = "qos-engine-priority", defaultValue = "false",
                description = "Send each request's class to the engine as its priority field (interactive and system "
                        + "ahead of default, batch behind), in the sense of the worker's engine: vLLM lower first, "
                        + "SGLang higher first; the engines must run priority scheduling (vLLM --scheduling-policy "
                        + "priority, SGLang --enable-priority-scheduling). Needs --tenants-file")
        boolean enginePriority) {

    public TenantsConfig {
        tenantsFile = tenantsFile == null || tenantsFile.isEmpty() ? null : tenantsFile;
        trustedTenantHeader = trustedTenantHeader == null || trustedTenantHeader.isEmpty() ? null : trustedTenantHeader;
        if (tenantsFile != null && tenantsFile.isBlank()) {
            throw new ConfigException("--tenants-file must be a file path (got '" + tenantsFile + "')");
        }
        if (trustedTenantHeader != null && !trustedTenantHeader.matches("[A-Za-z0-9-]{1,64}")) {
            throw new ConfigException("--trusted-tenant-header must be a header name (got '" + trustedTenantHeader + "')");
        }
        if (tenantsFile == null && (trustedTenantHeader != null || workerCapacityTokens > 0 || enginePriority)) {
            throw new ConfigException((trustedTenantHeader != null ? "--trusted-tenant-header"
                    : workerCapacityTokens > 0 ? "--qos-worker-capacity-tokens" : "--qos-engine-priority")
                    + " needs --tenants-file");
        }
    }

    /** Everything off. */
    public static final TenantsConfig OFF = SettingsBinder.defaults(TenantsConfig.class);
    public static final long DEFAULT_LOCALITY_SLACK_TOKENS = (long) OFF.localitySlackTokens();
    public static final int DEFAULT_MAX_TENANT_LABELS = OFF.maxTenantLabels();

    public boolean enabled() {
        return tenantsFile != null;
    }

    /** The fair queue's unit, from {@code --qos-fairness}. */
    public QosGate.Fairness fairnessMode() {
        return "requests".equals(fairness) ? QosGate.Fairness.REQUESTS : QosGate.Fairness.TOKENS;
    }

    /** {@code --qos-capacity-scope worker}: capacity is counted per worker (the default). */
    public boolean perWorkerCapacity() {
        return !"fleet".equals(capacityScope);
    }

    public boolean queueEnabled() {
        return workerCapacityTokens > 0;
    }
}
