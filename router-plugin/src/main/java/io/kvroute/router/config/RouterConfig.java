package io.kvroute.router.config;

import io.kvroute.router.policy.CacheAwareConfig;
import java.util.List;
import java.util.Objects;

/**
 * The router's validated configuration. Built by {@link RouterOptions} from a YAML plugin config
 * file and CLI flags (flags win), or programmatically by embedders via {@link #builder()}.
 * Every field has the default documented in docs/configuration.md.
 */
public record RouterConfig(
        String host,
        int port,
        List<String> workerUrls,
        String policy,
        int minLoadChoices,
        long maxBodyBytes,
        TimeoutSettings timeouts,
        HealthSettings health,
        RetrySettings retry,
        BreakerSettings breaker,
        String adminApiKey,
        String apiKey,
        List<String> modelIds,
        TokenizationSettings tokenization,
        PdSettings pd,
        CacheAwareSettings cacheAware,
        SessionSettings session,
        ServiceDiscoveryConfig serviceDiscovery,
        Integer metricsPort,
        KvEventsSettings kvEvents,
        int maxN,
        ObservabilityConfig observability,
        LoadSourceConfig loadSource,
        TenantsConfig tenants,
        LoraConfig lora) {

    public static final long DEFAULT_MAX_BODY_BYTES = 32L * 1024 * 1024;
    /** Largest {@code n} (sequences per request) a client may ask for: OpenAI's own limit. */
    public static final int DEFAULT_MAX_N = 128;

    public RouterConfig {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(policy, "policy");
        workerUrls = List.copyOf(workerUrls);
        modelIds = modelIds == null ? List.of() : List.copyOf(modelIds);
        tokenization = tokenization == null ? TokenizationSettings.DEFAULTS : tokenization;
        pd = pd == null ? PdSettings.DEFAULTS : pd;
        serviceDiscovery = serviceDiscovery == null ? ServiceDiscoveryConfig.disabled() : serviceDiscovery;
        observability = observability == null ? ObservabilityConfig.OFF : observability;
        loadSource = loadSource == null ? LoadSourceConfig.DEFAULTS : loadSource;
        health = health == null ? HealthSettings.DEFAULTS : health;
        retry = retry == null ? RetrySettings.DEFAULTS : retry;
        breaker = breaker == null ? BreakerSettings.DEFAULTS : breaker;
        session = session == null ? SessionSettings.DEFAULTS : session;
        kvEvents = kvEvents == null ? KvEventsSettings.DEFAULTS : kvEvents;
        cacheAware = cacheAware == null ? CacheAwareSettings.DEFAULTS : cacheAware;
        timeouts = timeouts == null ? TimeoutSettings.DEFAULTS : timeouts;
        tenants = tenants == null ? TenantsConfig.OFF : tenants;
        lora = lora == null ? LoraConfig.DEFAULTS : lora;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The cache_aware policy's knobs, as the policy reads them. */
    public CacheAwareConfig cacheAwareConfig() {
        return cacheAware.toPolicyConfig();
    }

    /** The admin key is never printed. */
    @Override
    public String toString() {
        return "RouterConfig[host=" + host + ", port=" + port + ", workers=" + workerUrls + ", policy=" + policy
                + ", adminApiKey=" + (adminApiKey == null ? "unset" : "set") + ", apiKey=" + (apiKey == null ? "unset" : "set") + "]";
    }

    /** Mutable builder with the documented defaults; {@link #build()} validates. */
    public static final class Builder {
        String host = "127.0.0.1";
        int port = 30000;
        List<String> workerUrls = List.of();
        String policy = "round_robin";
        int minLoadChoices = 2;
        long maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
        TimeoutSettings timeouts = TimeoutSettings.DEFAULTS;
        HealthSettings health = HealthSettings.DEFAULTS;
        RetrySettings retry = RetrySettings.DEFAULTS;
        BreakerSettings breaker = BreakerSettings.DEFAULTS;
        String adminApiKey = null;
        String apiKey = null;
        List<String> modelIds = List.of();
        SessionSettings session = SessionSettings.DEFAULTS;
        boolean serviceDiscovery = false;
        List<String> selector = List.of();
        List<String> prefillSelector = List.of();
        List<String> decodeSelector = List.of();
        String serviceDiscoveryNamespace = null;
        int serviceDiscoveryPort = ServiceDiscoveryConfig.DEFAULT_PORT;
        String bootstrapPortAnnotation = ServiceDiscoveryConfig.DEFAULT_BOOTSTRAP_PORT_ANNOTATION;
        Integer metricsPort = null;
        KvEventsSettings kvEvents = KvEventsSettings.DEFAULTS;
        CacheAwareSettings cacheAware = CacheAwareSettings.DEFAULTS;
        LoadSourceConfig loadSource = LoadSourceConfig.DEFAULTS;
        TokenizationSettings tokenization = TokenizationSettings.DEFAULTS;
        PdSettings pd = PdSettings.DEFAULTS;
        int maxN = DEFAULT_MAX_N;
        ObservabilityConfig observability = ObservabilityConfig.OFF;
        TenantsConfig tenants = TenantsConfig.OFF;
        LoraConfig lora = LoraConfig.DEFAULTS;

        public Builder host(String v) { host = v; return this; }
        public Builder port(int v) { port = v; return this; }
        public Builder workerUrls(List<String> v) { workerUrls = v; return this; }
        public Builder policy(String v) { policy = v; return this; }
        public Builder minLoadChoices(int v) { minLoadChoices = v; return this; }
        public Builder maxBodyBytes(long v) { maxBodyBytes = v; return this; }
        public Builder timeouts(TimeoutSettings v) { timeouts = v; return this; }
        public Builder health(HealthSettings v) { health = v; return this; }
        public Builder retry(RetrySettings v) { retry = v; return this; }
        public Builder breaker(BreakerSettings v) { breaker = v; return this; }
        public Builder adminApiKey(String v) { adminApiKey = v; return this; }
        public Builder apiKey(String v) { apiKey = v; return this; }
        public Builder modelIds(List<String> v) { modelIds = v; return this; }
        public Builder session(SessionSettings v) { session = v; return this; }
        public Builder serviceDiscovery(boolean v) { serviceDiscovery = v; return this; }
        public Builder selector(List<String> v) { selector = v; return this; }
        public Builder prefillSelector(List<String> v) { prefillSelector = v; return this; }
        public Builder decodeSelector(List<String> v) { decodeSelector = v; return this; }
        public Builder serviceDiscoveryNamespace(String v) { serviceDiscoveryNamespace = v; return this; }
        public Builder serviceDiscoveryPort(int v) { serviceDiscoveryPort = v; return this; }
        public Builder bootstrapPortAnnotation(String v) { bootstrapPortAnnotation = v; return this; }
        public Builder metricsPort(Integer v) { metricsPort = v; return this; }
        public Builder kvEvents(KvEventsSettings v) { kvEvents = v; return this; }
        public Builder cacheAware(CacheAwareSettings v) { cacheAware = v; return this; }
        public Builder loadSource(LoadSourceConfig v) { loadSource = v; return this; }
        public Builder tokenization(TokenizationSettings v) { tokenization = v; return this; }
        public Builder pd(PdSettings v) { pd = v; return this; }
        public Builder maxN(int v) { maxN = v; return this; }
        public Builder observability(ObservabilityConfig v) { observability = v; return this; }
        public Builder tenants(TenantsConfig v) { tenants = v; return this; }
        public Builder lora(LoraConfig v) { lora = v; return this; }

        public RouterConfig build() {
            ServiceDiscoveryConfig discovery = ConfigValidator.validate(this);
            return new RouterConfig(host, port, workerUrls, policy, minLoadChoices, maxBodyBytes, timeouts, health, retry, breaker, adminApiKey, apiKey, modelIds, tokenization, pd, cacheAware, session, discovery, metricsPort, kvEvents, maxN, observability,
                    loadSource, tenants, lora);
        }
    }
}
