package io.kvroute.router.config;

import io.kvroute.router.policy.CacheAwareConfig;
import java.util.List;

/**
 * The router's validated configuration: one immutable settings record per concern, each declared
 * once with its flags ({@link Setting}) and handed to the component that uses it. Built by
 * {@link RouterOptions} from a YAML plugin config file and CLI flags (flags win), or
 * programmatically by embedders via {@link #builder()}. The defaults are the records' declarations
 * (docs/configuration.md is generated from them).
 */
public record RouterConfig(
        ServerSettings server,
        AuthSettings auth,
        RoutingSettings routing,
        TimeoutSettings timeouts,
        HealthSettings health,
        RetrySettings retry,
        BreakerSettings breaker,
        TokenizationSettings tokenization,
        PdSettings pd,
        CacheAwareSettings cacheAware,
        SessionSettings session,
        ServiceDiscoveryConfig serviceDiscovery,
        KvEventsSettings kvEvents,
        ObservabilityConfig observability,
        LoadSourceConfig loadSource,
        TenantsConfig tenants,
        LoraConfig lora) {

    public static final long DEFAULT_MAX_BODY_BYTES = ServerSettings.DEFAULTS.maxBodyBytes();
    /** Largest {@code n} (sequences per request) a client may ask for: OpenAI's own limit. */
    public static final int DEFAULT_MAX_N = ServerSettings.DEFAULTS.maxN();

    public RouterConfig {
        server = server == null ? ServerSettings.DEFAULTS : server;
        auth = auth == null ? AuthSettings.DEFAULTS : auth;
        routing = routing == null ? RoutingSettings.DEFAULTS : routing;
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

    // Shorthands for the most read settings (embedders and tests read them as before the split).
    public String host() { return server.host(); }
    public int port() { return server.port(); }
    public Integer metricsPort() { return server.metricsPort(); }
    public long maxBodyBytes() { return server.maxBodyBytes(); }
    public int maxN() { return server.maxN(); }
    public String adminApiKey() { return auth.adminApiKey(); }
    public String apiKey() { return auth.apiKey(); }
    public List<String> workerUrls() { return routing.workerUrls(); }
    public String policy() { return routing.policy(); }
    public int minLoadChoices() { return routing.minLoadChoices(); }
    public List<String> modelIds() { return routing.modelIds(); }

    /** The cache_aware policy's knobs, as the policy reads them. */
    public CacheAwareConfig cacheAwareConfig() {
        return cacheAware.toPolicyConfig();
    }

    /** The keys are never printed. */
    @Override
    public String toString() {
        return "RouterConfig[host=" + host() + ", port=" + port() + ", workers=" + workerUrls() + ", policy=" + policy()
                + ", adminApiKey=" + (adminApiKey() == null ? "unset" : "set") + ", apiKey=" + (apiKey() == null ? "unset" : "set") + "]";
    }

    /**
     * Builder over the settings records, each starting at its declared defaults; a record given whole
     * replaces it, a single-value setter rebuilds (and so checks) its record. {@link #build()} checks
     * the rules that span records.
     */
    public static final class Builder {
        ServerSettings server = ServerSettings.DEFAULTS;
        AuthSettings auth = AuthSettings.DEFAULTS;
        RoutingSettings routing = RoutingSettings.DEFAULTS;
        DiscoverySettings discovery = DiscoverySettings.DEFAULTS;
        TimeoutSettings timeouts = TimeoutSettings.DEFAULTS;
        HealthSettings health = HealthSettings.DEFAULTS;
        RetrySettings retry = RetrySettings.DEFAULTS;
        BreakerSettings breaker = BreakerSettings.DEFAULTS;
        SessionSettings session = SessionSettings.DEFAULTS;
        KvEventsSettings kvEvents = KvEventsSettings.DEFAULTS;
        CacheAwareSettings cacheAware = CacheAwareSettings.DEFAULTS;
        LoadSourceConfig loadSource = LoadSourceConfig.DEFAULTS;
        TokenizationSettings tokenization = TokenizationSettings.DEFAULTS;
        PdSettings pd = PdSettings.DEFAULTS;
        ObservabilityConfig observability = ObservabilityConfig.OFF;
        TenantsConfig tenants = TenantsConfig.OFF;
        LoraConfig lora = LoraConfig.DEFAULTS;

        public Builder server(ServerSettings v) { server = v; return this; }
        public Builder auth(AuthSettings v) { auth = v; return this; }
        public Builder routing(RoutingSettings v) { routing = v; return this; }
        public Builder discovery(DiscoverySettings v) { discovery = v; return this; }
        public Builder timeouts(TimeoutSettings v) { timeouts = v; return this; }
        public Builder health(HealthSettings v) { health = v; return this; }
        public Builder retry(RetrySettings v) { retry = v; return this; }
        public Builder breaker(BreakerSettings v) { breaker = v; return this; }
        public Builder session(SessionSettings v) { session = v; return this; }
        public Builder kvEvents(KvEventsSettings v) { kvEvents = v; return this; }
        public Builder cacheAware(CacheAwareSettings v) { cacheAware = v; return this; }
        public Builder loadSource(LoadSourceConfig v) { loadSource = v; return this; }
        public Builder tokenization(TokenizationSettings v) { tokenization = v; return this; }
        public Builder pd(PdSettings v) { pd = v; return this; }
        public Builder observability(ObservabilityConfig v) { observability = v; return this; }
        public Builder tenants(TenantsConfig v) { tenants = v; return this; }
        public Builder lora(LoraConfig v) { lora = v; return this; }

        public Builder host(String v) { server = new ServerSettings(v, server.port(), server.metricsPort(), server.maxBodyBytes(), server.maxN()); return this; }
        public Builder port(int v) { server = new ServerSettings(server.host(), v, server.metricsPort(), server.maxBodyBytes(), server.maxN()); return this; }
        public Builder metricsPort(Integer v) { server = new ServerSettings(server.host(), server.port(), v, server.maxBodyBytes(), server.maxN()); return this; }
        public Builder maxBodyBytes(long v) { server = new ServerSettings(server.host(), server.port(), server.metricsPort(), v, server.maxN()); return this; }
        public Builder maxN(int v) { server = new ServerSettings(server.host(), server.port(), server.metricsPort(), server.maxBodyBytes(), v); return this; }
        public Builder adminApiKey(String v) { auth = new AuthSettings(v, auth.apiKey()); return this; }
        public Builder apiKey(String v) { auth = new AuthSettings(auth.adminApiKey(), v); return this; }
        public Builder workerUrls(List<String> v) { routing = new RoutingSettings(v, routing.policy(), routing.minLoadChoices(), routing.modelIds()); return this; }
        public Builder policy(String v) { routing = new RoutingSettings(routing.workerUrls(), v, routing.minLoadChoices(), routing.modelIds()); return this; }
        public Builder minLoadChoices(int v) { routing = new RoutingSettings(routing.workerUrls(), routing.policy(), v, routing.modelIds()); return this; }
        public Builder modelIds(List<String> v) { routing = new RoutingSettings(routing.workerUrls(), routing.policy(), routing.minLoadChoices(), v); return this; }

        public RouterConfig build() {
            for (Record settings : List.<Record>of(server, auth, routing, discovery, timeouts, health, retry, breaker,
                    session, kvEvents, cacheAware, loadSource, tokenization, pd, observability, tenants, lora)) {
                SettingsBinder.checkBounds(settings);
            }
            ServiceDiscoveryConfig resolved = ConfigValidator.validate(this);
            return new RouterConfig(server, auth, routing, timeouts, health, retry, breaker, tokenization, pd, cacheAware,
                    session, resolved, kvEvents, observability, loadSource, tenants, lora);
        }
    }
}
