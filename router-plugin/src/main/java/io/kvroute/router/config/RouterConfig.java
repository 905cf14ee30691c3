package io.kvroute.router.config;

import io.kvroute.router.policy.CacheAwareConfig;
import io.kvroute.router.prefix.PrefixIndexConfig;
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
        double requestTimeoutSecs,
        double connectTimeoutSecs,
        double streamIdleTimeoutSecs,
        double healthCheckIntervalSecs,
        double healthCheckTimeoutSecs,
        int healthFailureThreshold,
        int healthSuccessThreshold,
        int retryMaxAttempts,
        long retryInitialBackoffMs,
        long retryMaxBackoffMs,
        double retryBackoffMultiplier,
        double retryJitter,
        int cbFailureThreshold,
        int cbSuccessThreshold,
        double cbTimeoutSecs,
        boolean disableCircuitBreaker,
        double shutdownDrainSecs,
        String adminApiKey,
        String apiKey,
        List<String> modelIds,
        List<String> tokenizerPaths,
        boolean disableInputIdsForwarding,
        List<String> prefillUrls,
        List<String> decodeUrls,
        String prefillPolicy,
        String decodePolicy,
        double pdBusyRetryTimeoutSecs,
        double loadFreshnessSecs,
        long cacheAffinityMinMatchedTokens,
        double cacheAffinityMinMatchRatio,
        int cacheCandidateMaxWorkers,
        int cacheCandidateMinWorkers,
        double cacheCandidateRatio,
        long cacheSwitchMarginTokens,
        long pressureAbsThresholdTokens,
        double pressureRelThreshold,
        double pressureAbsThresholdMs,
        boolean disablePressureGuard,
        Integer workerQueueLimit,
        Integer saturationQueueFloor,
        String cacheKeyMode,
        int cacheSampleStride,
        long cacheMaxTreeSize,
        String sessionIdHeader,
        double sessionIdleSecs,
        String stickyFallbackPolicy,
        long tokenizerCacheBytes,
        ServiceDiscoveryConfig serviceDiscovery,
        Integer metricsPort,
        Long cacheMaxIndexBytes,
        String cacheIndex,
        double kvEventsSilenceSecs,
        int kvEventsMaxBlocksPerRank,
        String kvEventsHash,
        int maxN,
        ObservabilityConfig observability,
        LoadSourceConfig loadSource,
        LoraConfig lora) {

    public static final long DEFAULT_MAX_BODY_BYTES = 32L * 1024 * 1024;
    /** Largest {@code n} (sequences per request) a client may ask for: OpenAI's own limit. */
    public static final int DEFAULT_MAX_N = 128;

    public RouterConfig {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(policy, "policy");
        workerUrls = List.copyOf(workerUrls);
        modelIds = modelIds == null ? List.of() : List.copyOf(modelIds);
        tokenizerPaths = tokenizerPaths == null ? List.of() : List.copyOf(tokenizerPaths);
        prefillUrls = prefillUrls == null ? List.of() : List.copyOf(prefillUrls);
        decodeUrls = decodeUrls == null ? List.of() : List.copyOf(decodeUrls);
        serviceDiscovery = serviceDiscovery == null ? ServiceDiscoveryConfig.disabled() : serviceDiscovery;
        observability = observability == null ? ObservabilityConfig.OFF : observability;
        loadSource = loadSource == null ? LoadSourceConfig.DEFAULTS : loadSource;
        lora = lora == null ? LoraConfig.DEFAULTS : lora;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The cache_aware policy's knobs ({@code --cache-*}, {@code --pressure-*}, queue gate and floor). */
    /** {@code --cache-max-index-bytes}, or its default: 1/8 of the max heap ({@link PrefixIndexConfig#defaultMaxBytes()}). */
    public long effectiveCacheMaxIndexBytes() {
        return cacheMaxIndexBytes != null ? cacheMaxIndexBytes : PrefixIndexConfig.defaultMaxBytes();
    }

    public CacheAwareConfig cacheAwareConfig() {
        return new CacheAwareConfig(cacheAffinityMinMatchedTokens, cacheAffinityMinMatchRatio, cacheCandidateMaxWorkers,
                cacheCandidateMinWorkers, cacheCandidateRatio, cacheSwitchMarginTokens, pressureAbsThresholdTokens,
                pressureRelThreshold, pressureAbsThresholdMs, disablePressureGuard,
                workerQueueLimit == null ? 0 : workerQueueLimit, saturationQueueFloor == null ? 0 : saturationQueueFloor,
                cacheKeyMode, cacheSampleStride, cacheMaxTreeSize);
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
        double requestTimeoutSecs = 1800;
        double connectTimeoutSecs = 5;
        double streamIdleTimeoutSecs = 180;
        double healthCheckIntervalSecs = 10;
        double healthCheckTimeoutSecs = 5;
        int healthFailureThreshold = 3;
        int healthSuccessThreshold = 2;
        int retryMaxAttempts = 3;
        long retryInitialBackoffMs = 50;
        long retryMaxBackoffMs = 30000;
        double retryBackoffMultiplier = 1.5;
        double retryJitter = 0.2;
        int cbFailureThreshold = 10;
        int cbSuccessThreshold = 3;
        double cbTimeoutSecs = 60;
        boolean disableCircuitBreaker = false;
        double shutdownDrainSecs = 30;
        String adminApiKey = null;
        String apiKey = null;
        List<String> modelIds = List.of();
        List<String> tokenizerPaths = List.of();
        boolean disableInputIdsForwarding = false;
        List<String> prefillUrls = List.of();
        List<String> decodeUrls = List.of();
        String prefillPolicy = null;
        String decodePolicy = "power_of_two";
        double pdBusyRetryTimeoutSecs = 0;
        double loadFreshnessSecs = 5;
        long cacheAffinityMinMatchedTokens = 1024;
        double cacheAffinityMinMatchRatio = 0;
        int cacheCandidateMaxWorkers = 32;
        int cacheCandidateMinWorkers = 8;
        double cacheCandidateRatio = 0.05;
        long cacheSwitchMarginTokens = 1024;
        long pressureAbsThresholdTokens = 1024;
        double pressureRelThreshold = 1.5;
        double pressureAbsThresholdMs = 100;
        boolean disablePressureGuard = false;
        Integer workerQueueLimit = null;
        Integer saturationQueueFloor = null;
        String cacheKeyMode = "auto";
        int cacheSampleStride = 512;
        long cacheMaxTreeSize = PrefixIndexConfig.DEFAULT_PER_WORKER_CAPACITY_ELEMENTS;
        String sessionIdHeader = "x-session-id";
        double sessionIdleSecs = 600;
        String stickyFallbackPolicy = "power_of_two";
        /** Per-model chat prefix token cache: 64 MiB holds a few hundred 100k-token conversations' ids. */
        long tokenizerCacheBytes = 64L << 20;
        boolean serviceDiscovery = false;
        List<String> selector = List.of();
        List<String> prefillSelector = List.of();
        List<String> decodeSelector = List.of();
        String serviceDiscoveryNamespace = null;
        int serviceDiscoveryPort = ServiceDiscoveryConfig.DEFAULT_PORT;
        String bootstrapPortAnnotation = ServiceDiscoveryConfig.DEFAULT_BOOTSTRAP_PORT_ANNOTATION;
        Integer metricsPort = null;
        Long cacheMaxIndexBytes = null;
        String cacheIndex = "auto";
        double kvEventsSilenceSecs = 60;
        int kvEventsMaxBlocksPerRank = 1 << 20;
        String kvEventsHash = "engine";
        int maxN = DEFAULT_MAX_N;
        String accessLog = null;
        String otlpTracesEndpoint = null;
        double traceSamplingRatio = 1.0;
        String loadSource = LoadSourceConfig.DEFAULTS.loadSource();
        String engineType = LoadSourceConfig.DEFAULTS.engineType();
        long metricsScrapeIntervalMs = LoadSourceConfig.DEFAULTS.scrapeIntervalMs();
        long metricsScrapeTimeoutMs = LoadSourceConfig.DEFAULTS.scrapeTimeoutMs();
        long metricsStalenessMs = LoadSourceConfig.DEFAULTS.stalenessMs();
        String metricsWaitingName = null;
        String metricsRunningName = null;
        String metricsKvUsageName = null;
        LoraConfig lora = LoraConfig.DEFAULTS;

        public Builder host(String v) { host = v; return this; }
        public Builder port(int v) { port = v; return this; }
        public Builder workerUrls(List<String> v) { workerUrls = v; return this; }
        public Builder policy(String v) { policy = v; return this; }
        public Builder minLoadChoices(int v) { minLoadChoices = v; return this; }
        public Builder maxBodyBytes(long v) { maxBodyBytes = v; return this; }
        public Builder requestTimeoutSecs(double v) { requestTimeoutSecs = v; return this; }
        public Builder connectTimeoutSecs(double v) { connectTimeoutSecs = v; return this; }
        public Builder streamIdleTimeoutSecs(double v) { streamIdleTimeoutSecs = v; return this; }
        public Builder healthCheckIntervalSecs(double v) { healthCheckIntervalSecs = v; return this; }
        public Builder healthCheckTimeoutSecs(double v) { healthCheckTimeoutSecs = v; return this; }
        public Builder healthFailureThreshold(int v) { healthFailureThreshold = v; return this; }
        public Builder healthSuccessThreshold(int v) { healthSuccessThreshold = v; return this; }
        public Builder retryMaxAttempts(int v) { retryMaxAttempts = v; return this; }
        public Builder retryInitialBackoffMs(long v) { retryInitialBackoffMs = v; return this; }
        public Builder retryMaxBackoffMs(long v) { retryMaxBackoffMs = v; return this; }
        public Builder retryBackoffMultiplier(double v) { retryBackoffMultiplier = v; return this; }
        public Builder retryJitter(double v) { retryJitter = v; return this; }
        public Builder cbFailureThreshold(int v) { cbFailureThreshold = v; return this; }
        public Builder cbSuccessThreshold(int v) { cbSuccessThreshold = v; return this; }
        public Builder cbTimeoutSecs(double v) { cbTimeoutSecs = v; return this; }
        public Builder disableCircuitBreaker(boolean v) { disableCircuitBreaker = v; return this; }
        public Builder shutdownDrainSecs(double v) { shutdownDrainSecs = v; return this; }
        public Builder adminApiKey(String v) { adminApiKey = v; return this; }
        public Builder apiKey(String v) { apiKey = v; return this; }
        public Builder modelIds(List<String> v) { modelIds = v; return this; }
        public Builder tokenizerPaths(List<String> v) { tokenizerPaths = v; return this; }
        public Builder disableInputIdsForwarding(boolean v) { disableInputIdsForwarding = v; return this; }
        public Builder prefillUrls(List<String> v) { prefillUrls = v; return this; }
        public Builder decodeUrls(List<String> v) { decodeUrls = v; return this; }
        public Builder prefillPolicy(String v) { prefillPolicy = v; return this; }
        public Builder decodePolicy(String v) { decodePolicy = v; return this; }
        public Builder pdBusyRetryTimeoutSecs(double v) { pdBusyRetryTimeoutSecs = v; return this; }
        public Builder loadFreshnessSecs(double v) { loadFreshnessSecs = v; return this; }
        public Builder cacheAffinityMinMatchedTokens(long v) { cacheAffinityMinMatchedTokens = v; return this; }
        public Builder cacheAffinityMinMatchRatio(double v) { cacheAffinityMinMatchRatio = v; return this; }
        public Builder cacheCandidateMaxWorkers(int v) { cacheCandidateMaxWorkers = v; return this; }
        public Builder cacheCandidateMinWorkers(int v) { cacheCandidateMinWorkers = v; return this; }
        public Builder cacheCandidateRatio(double v) { cacheCandidateRatio = v; return this; }
        public Builder cacheSwitchMarginTokens(long v) { cacheSwitchMarginTokens = v; return this; }
        public Builder pressureAbsThresholdTokens(long v) { pressureAbsThresholdTokens = v; return this; }
        public Builder pressureRelThreshold(double v) { pressureRelThreshold = v; return this; }
        public Builder pressureAbsThresholdMs(double v) { pressureAbsThresholdMs = v; return this; }
        public Builder disablePressureGuard(boolean v) { disablePressureGuard = v; return this; }
        public Builder workerQueueLimit(Integer v) { workerQueueLimit = v; return this; }
        public Builder saturationQueueFloor(Integer v) { saturationQueueFloor = v; return this; }
        public Builder cacheKeyMode(String v) { cacheKeyMode = v; return this; }
        public Builder cacheSampleStride(int v) { cacheSampleStride = v; return this; }
        public Builder cacheMaxTreeSize(long v) { cacheMaxTreeSize = v; return this; }
        public Builder sessionIdHeader(String v) { sessionIdHeader = v; return this; }
        public Builder sessionIdleSecs(double v) { sessionIdleSecs = v; return this; }
        public Builder stickyFallbackPolicy(String v) { stickyFallbackPolicy = v; return this; }
        public Builder tokenizerCacheBytes(long v) { tokenizerCacheBytes = v; return this; }
        public Builder serviceDiscovery(boolean v) { serviceDiscovery = v; return this; }
        public Builder selector(List<String> v) { selector = v; return this; }
        public Builder prefillSelector(List<String> v) { prefillSelector = v; return this; }
        public Builder decodeSelector(List<String> v) { decodeSelector = v; return this; }
        public Builder serviceDiscoveryNamespace(String v) { serviceDiscoveryNamespace = v; return this; }
        public Builder serviceDiscoveryPort(int v) { serviceDiscoveryPort = v; return this; }
        public Builder bootstrapPortAnnotation(String v) { bootstrapPortAnnotation = v; return this; }
        public Builder metricsPort(Integer v) { metricsPort = v; return this; }
        public Builder cacheMaxIndexBytes(Long v) { cacheMaxIndexBytes = v; return this; }
        public Builder cacheIndex(String v) { cacheIndex = v; return this; }
        public Builder kvEventsSilenceSecs(double v) { kvEventsSilenceSecs = v; return this; }
        public Builder kvEventsMaxBlocksPerRank(int v) { kvEventsMaxBlocksPerRank = v; return this; }
        public Builder kvEventsHash(String v) { kvEventsHash = v; return this; }
        public Builder maxN(int v) { maxN = v; return this; }
        public Builder accessLog(String v) { accessLog = v; return this; }
        public Builder otlpTracesEndpoint(String v) { otlpTracesEndpoint = v; return this; }
        public Builder traceSamplingRatio(double v) { traceSamplingRatio = v; return this; }
        public Builder loadSource(String v) { loadSource = v; return this; }
        public Builder engineType(String v) { engineType = v; return this; }
        public Builder metricsScrapeIntervalMs(long v) { metricsScrapeIntervalMs = v; return this; }
        public Builder metricsScrapeTimeoutMs(long v) { metricsScrapeTimeoutMs = v; return this; }
        public Builder metricsStalenessMs(long v) { metricsStalenessMs = v; return this; }
        public Builder metricsWaitingName(String v) { metricsWaitingName = v; return this; }
        public Builder metricsRunningName(String v) { metricsRunningName = v; return this; }
        public Builder metricsKvUsageName(String v) { metricsKvUsageName = v; return this; }
        public Builder lora(LoraConfig v) { lora = v; return this; }

        public RouterConfig build() {

        
                    ServiceDiscoveryConfig discovery = ConfigValidator.validate(this);
            return new RouterConfig(host, port, workerUrls, policy, minLoadChoices, maxBodyBytes, requestTimeoutSecs, connectTimeoutSecs, streamIdleTimeoutSecs, healthCheckIntervalSecs, healthCheckTimeoutSecs, healthFailureThreshold, healthSuccessThreshold, retryMaxAttempts, retryInitialBackoffMs, retryMaxBackoffMs, retryBackoffMultiplier, retryJitter, cbFailureThreshold, cbSuccessThreshold, cbTimeoutSecs, disableCircuitBreaker, shutdownDrainSecs, adminApiKey, apiKey, modelIds, tokenizerPaths, disableInputIdsForwarding, prefillUrls, decodeUrls, prefillPolicy, decodePolicy, pdBusyRetryTimeoutSecs, loadFreshnessSecs, cacheAffinityMinMatchedTokens, cacheAffinityMinMatchRatio, cacheCandidateMaxWorkers, cacheCandidateMinWorkers, cacheCandidateRatio, cacheSwitchMarginTokens, pressureAbsThresholdTokens, pressureRelThreshold, pressureAbsThresholdMs, disablePressureGuard, workerQueueLimit, saturationQueueFloor, cacheKeyMode, cacheSampleStride, cacheMaxTreeSize, sessionIdHeader, sessionIdleSecs, stickyFallbackPolicy, tokenizerCacheBytes, discovery, metricsPort, cacheMaxIndexBytes, cacheIndex, kvEventsSilenceSecs, kvEventsMaxBlocksPerRank, kvEventsHash, maxN, new ObservabilityConfig(accessLog, otlpTracesEndpoint, traceSamplingRatio),
                    new LoadSourceConfig(loadSource, engineType, metricsScrapeIntervalMs, metricsScrapeTimeoutMs,
                            metricsStalenessMs, metricsWaitingName, metricsRunningName, metricsKvUsageName), lora);
        }
    }
}
