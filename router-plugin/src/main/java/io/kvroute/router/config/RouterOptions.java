package io.kvroute.router.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The router's command line. A YAML plugin config file ({@code --config}) uses the flag names as
 * keys ({@code worker-urls: [...]}, {@code policy: round_robin}); its values are applied first
 * and flags given on the command line override them.
 */
@Command(name = "kvroute-router", mixinStandardHelpOptions = true,
        description = "OpenAI-compatible, cache- and load-aware router for GPU worker fleets.")
public final class RouterOptions {

    @Option(names = "--config", description = "YAML plugin config file; keys are flag names.")
    Path config;

    @Option(names = "--host", description = "Listen address (default 127.0.0.1).")
    String host = "127.0.0.1";

    @Option(names = "--port", description = "Listen port; 0 picks a free one (default 30000).")
    int port = 30000;

    @Option(names = "--worker-urls", split = ",", description = "Worker base URLs, comma separated.")
    List<String> workerUrls = new ArrayList<>();

    @Option(names = "--policy", description = "Routing policy (default round_robin); also the PD prefill policy unless --prefill-policy is set.")
    String policy = "round_robin";

    @Option(names = "--min-load-choices", description = "k for power-of-k sampling (default 2).")
    int minLoadChoices = 2;

    @Option(names = "--max-body-bytes", description = "Largest accepted request body (default 33554432 = 32 MiB).")
    long maxBodyBytes = RouterConfig.DEFAULT_MAX_BODY_BYTES;

    @Option(names = "--max-n", description = "Largest n (sequences per request) a client may ask for; more is a 400 (default 128, OpenAI's limit).")
    int maxN = RouterConfig.DEFAULT_MAX_N;

    @Option(names = "--request-timeout-secs", description = "Whole-request timeout towards a worker (default 1800).")
    double requestTimeoutSecs = 1800;

    @Option(names = "--connect-timeout-secs", description = "TCP connect timeout towards a worker (default 5).")
    double connectTimeoutSecs = 5;

    @Option(names = "--stream-idle-timeout-secs", description = "Streaming requests: longest silence from a worker before the stream ends with an SSE error event (default 180).")
    double streamIdleTimeoutSecs = 180;

    @Option(names = "--health-check-interval-secs", description = "Active /health probe interval (default 10).")
    double healthCheckIntervalSecs = 10;

    @Option(names = "--health-check-timeout-secs", description = "Active /health probe timeout (default 5).")
    double healthCheckTimeoutSecs = 5;

    @Option(names = "--health-failure-threshold", description = "Consecutive failed probes to mark unhealthy (default 3).")
    int healthFailureThreshold = 3;

    @Option(names = "--health-success-threshold", description = "Consecutive good probes to mark healthy (default 2).")
    int healthSuccessThreshold = 2;

    @Option(names = "--retry-max-attempts", description = "Attempts per request, the first included; 1 disables retries (default 3).")
    int retryMaxAttempts = 3;

    @Option(names = "--retry-initial-backoff-ms", description = "Backoff before the first retry (default 50).")
    long retryInitialBackoffMs = 50;

    @Option(names = "--retry-max-backoff-ms", description = "Backoff ceiling (default 30000).")
    long retryMaxBackoffMs = 30000;

    @Option(names = "--retry-backoff-multiplier", description = "Backoff growth per retry (default 1.5).")
    double retryBackoffMultiplier = 1.5;

    @Option(names = "--retry-jitter", description = "Relative jitter applied to each backoff, 0..1 (default 0.2).")
    double retryJitter = 0.2;

    @Option(names = "--cb-failure-threshold", description = "Consecutive failures that open a worker's breaker (default 10).")
    int cbFailureThreshold = 10;

    @Option(names = "--cb-success-threshold", description = "Consecutive half-open successes that close it (default 3).")
    int cbSuccessThreshold = 3;

    @Option(names = "--cb-timeout-secs", description = "Open time before half-open trial traffic (default 60).")
    double cbTimeoutSecs = 60;

    @Option(names = "--disable-circuit-breaker", arity = "0..1", fallbackValue = "true", description = "Turn the per-worker circuit breakers off.")
    boolean disableCircuitBreaker;

    @Option(names = "--shutdown-drain-secs", description = "On shutdown, how long in-flight requests may finish (default 30).")
    double shutdownDrainSecs = 30;

    @Option(names = "--admin-api-key", description = "Bearer token for the admin API; env KVROUTE_ADMIN_API_KEY. Unset = admin API disabled.")
    String adminApiKey = null;

    @Option(names = "--api-key", description = "Bearer token required on every path but /healthz and /readyz (inference, /v1/models, /v1/loads, /metrics); env KVROUTE_API_KEY. Unset = open.")
    String apiKey = null;

    @Option(names = "--tokenizer-path", split = ",", description = "Tokenizer directories (tokenizer.json + tokenizer_config.json): DIR for every model, or MODEL=DIR, comma separated.")
    List<String> tokenizerPaths = new ArrayList<>();

    @Option(names = "--disable-input-ids-forwarding", arity = "0..1", fallbackValue = "true", description = "Never forward ingress token ids as input_ids (routing still tokenizes).")
    boolean disableInputIdsForwarding;

    @Option(names = "--prefill-urls", split = ",", description = "PD prefill workers: URL or URL=BOOTSTRAP_PORT, comma separated.")
    List<String> prefillUrls = new ArrayList<>();

    @Option(names = "--decode-urls", split = ",", description = "PD decode workers, comma separated.")
    List<String> decodeUrls = new ArrayList<>();

    @Option(names = "--prefill-policy", description = "Policy choosing the PD prefill worker (default: --policy).")
    String prefillPolicy;

    @Option(names = "--decode-policy", description = "Policy choosing the PD decode worker (default power_of_two).")
    String decodePolicy = "power_of_two";

    @Option(names = "--pd-busy-retry-timeout-secs", description = "Retry a PD request answered busy (429) before any output for up to this long; 0 = off (default 0).")
    double pdBusyRetryTimeoutSecs;

    @Option(names = "--load-freshness-secs", description = "How long an engine load report stays fresh, judged by the router's clock (default 5).")
    double loadFreshnessSecs = 5;

    @Option(names = "--model-ids", split = ",", description = "Served model ids; learned from workers' /server_info when empty.")
    List<String> modelIds = new ArrayList<>();

    @Option(names = "--cache-affinity-min-matched-tokens", description = "cache_aware: a worker is a cache candidate with at least this many matched tokens (default 1024; char modes estimate 4 chars per token).")
    long cacheAffinityMinMatchedTokens = 1024;

    @Option(names = "--cache-affinity-min-match-ratio", description = "cache_aware: and at least this fraction of the request's key matched, 0..1; 0 = off (default 0).")
    double cacheAffinityMinMatchRatio = 0;

    @Option(names = "--cache-candidate-max-workers", description = "cache_aware: upper bound of the candidate cap (default 32).")
    int cacheCandidateMaxWorkers = 32;

    @Option(names = "--cache-candidate-min-workers", description = "cache_aware: lower bound of the proportional candidate cap (default 8).")
    int cacheCandidateMinWorkers = 8;

    @Option(names = "--cache-candidate-ratio", description = "cache_aware: proportional candidate cap, ceil(ratio x pool) (default 0.05).")
    double cacheCandidateRatio = 0.05;

    @Option(names = "--cache-switch-margin-tokens", description = "cache_aware: a rival with at most this much more uncached work may win on pressure (default 1024).")
    long cacheSwitchMarginTokens = 1024;

    @Option(names = "--pressure-abs-threshold-tokens", description = "cache_aware pressure guard: absolute gap in waiting uncached tokens (default 1024).")
    long pressureAbsThresholdTokens = 1024;

    @Option(names = "--pressure-rel-threshold", description = "cache_aware pressure guard: relative gap, > 1 (default 1.5).")
    double pressureRelThreshold = 1.5;

    @Option(names = "--pressure-abs-threshold-ms", description = "cache_aware pressure guard: absolute gap in estimated prefill queue ms, used when both workers have estimates (default 100).")
    double pressureAbsThresholdMs = 100;

    @Option(names = "--disable-pressure-guard", arity = "0..1", fallbackValue = "true", description = "cache_aware: the least-uncached admitted owner always wins.")
    boolean disablePressureGuard;

    @Option(names = "--worker-queue-limit", description = "cache_aware queue gate: owners with a fresh num_waiting_reqs >= N are not cache winners (default unset).")
    Integer workerQueueLimit = null;

    @Option(names = "--saturation-queue-floor", description = "cache_aware saturation pin: stay on a queued owner when no routable worker is fresh below F (default unset; needs --worker-queue-limit).")
    Integer saturationQueueFloor = null;

    @Option(names = "--cache-index", description = "Where cache_aware learns what each worker has cached: exact (the "
            + "engines' KV events; workers without live events count as holding nothing), approximate (the router's own "
            + "prefix tree), auto (exact for workers whose events are live, the tree for the rest) (default auto).")
    String cacheIndex = "auto";

    @Option(names = "--kv-events-silence-secs", description = "A worker's KV-event publisher silent this long is reported "
            + "(kvroute_kv_events_silences_total, a warning, kvroute_kv_events_publisher_silent{worker,rank} = 1 while it "
            + "lasts) and resubscribed (default 60).")
    double kvEventsSilenceSecs = 60;

    @Option(names = "--kv-events-max-blocks-per-rank", description = "Blocks the exact index keeps per engine dp rank; "
            + "stores beyond are refused (default 1048576).")
    int kvEventsMaxBlocksPerRank = 1 << 20;

    @Option(names = "--kv-events-hash", description = "How the exact index keys KV-event blocks: engine (the engine's "
            + "own block hashes, reproducible for SGLang), tokens (the router's own chained hash of each event's "
            + "token_ids, for engines with unreproducible hashes such as vLLM's per-process seed) (default engine).")
    String kvEventsHash = "engine";

    @Option(names = "--cache-key-mode", description = "cache_aware prefix key: auto (tokens when the request has token ids, else sampled), tokens, chars or sampled (default auto).")
    String cacheKeyMode = "auto";

    @Option(names = "--cache-sample-stride", description = "cache_aware sampled mode: keep one code point every N (default 512).")
    int cacheSampleStride = 512;

    @Option(names = "--cache-max-tree-size", description = "cache_aware prefix index capacity per worker, in key elements (default 4194304).")
    long cacheMaxTreeSize = io.kvroute.router.prefix.PrefixIndexConfig.DEFAULT_PER_WORKER_CAPACITY_ELEMENTS;

    @Option(names = "--session-id-header", description = "Header carrying the session key for session affinity (default x-session-id).")
    String sessionIdHeader = "x-session-id";

    @Option(names = "--session-idle-secs", description = "A session unused this long forgets its worker (default 600).")
    double sessionIdleSecs = 600;

    @Option(names = "--sticky-fallback-policy", description = "Policy choosing a new session's worker under --policy sticky (default power_of_two).")
    String stickyFallbackPolicy = "power_of_two";

    @Option(names = "--tokenizer-cache-bytes", description = "Per model, bytes of chat-prefix token ids kept so a conversation's earlier turns are not tokenized again (default 67108864 = 64 MiB; 0 = off).")
    long tokenizerCacheBytes = 64L << 20;

    @Option(names = "--service-discovery", arity = "0..1", fallbackValue = "true", description = "Discover workers from Kubernetes pods (excludes --worker-urls, --prefill-urls, --decode-urls).")
    boolean serviceDiscovery;

    @Option(names = "--selector", arity = "1..*", split = ",", description = "Service discovery: labels k=v (all must match) of regular worker pods.")
    List<String> selector = new ArrayList<>();

    @Option(names = "--prefill-selector", arity = "1..*", split = ",", description = "Service discovery: labels k=v of PD prefill worker pods.")
    List<String> prefillSelector = new ArrayList<>();

    @Option(names = "--decode-selector", arity = "1..*", split = ",", description = "Service discovery: labels k=v of PD decode worker pods.")
    List<String> decodeSelector = new ArrayList<>();

    @Option(names = "--service-discovery-namespace", description = "Service discovery: namespace to watch (default: the client's namespace, else default).")
    String serviceDiscoveryNamespace;

    @Option(names = "--service-discovery-port", description = "Service discovery: workers' HTTP port (default 80; a pod's kvroute.io/worker-port annotation overrides it).")
    int serviceDiscoveryPort = ServiceDiscoveryConfig.DEFAULT_PORT;

    @Option(names = "--bootstrap-port-annotation", description = "Service discovery: pod annotation holding a prefill worker's bootstrap port (default sglang.ai/bootstrap-port).")
    String bootstrapPortAnnotation = ServiceDiscoveryConfig.DEFAULT_BOOTSTRAP_PORT_ANNOTATION;

    @Option(names = "--cache-max-index-bytes", description = "cache_aware prefix index: global bound on its estimated memory across all workers and key kinds, in bytes; the least recently used leaves are evicted whoever owns them (default: 1/8 of the max heap).")
    Long cacheMaxIndexBytes;

    @Option(names = "--metrics-port", description = "Serve /metrics on this port (same --host, no API key) instead of the main port; 0 picks a free one (default unset: /metrics on the main port, behind --api-key when set).")
    Integer metricsPort;

    @Option(names = "--access-log", description = "One JSON line per inference request: stdout or a file path (default off).")
    String accessLog;

    @Option(names = "--otlp-traces-endpoint", description = "OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces; enables tracing (default off).")
    String otlpTracesEndpoint;

    @Option(names = "--trace-sampling-ratio", description = "Share of new traces sampled, 0..1; an incoming traceparent's decision is kept (default 1).")
    double traceSamplingRatio = 1.0;

    @Option(names = "--load-source", description = "Where engine load comes from: auto (LoadStat when the worker advertises "
            + "it, else its /metrics), loadstat, metrics or none (default auto).")
    String loadSource = "auto";

    @Option(names = "--engine-type", description = "The workers' engine: auto (a worker with /server_info is SGLang, "
            + "one without is vLLM), sglang, vllm or trtllm (default auto).")
    String engineType = "auto";

    @Option(names = "--metrics-scrape-interval-ms", description = "Time between two /metrics scrapes of one worker (default 200).")
    long metricsScrapeIntervalMs = 200;

    @Option(names = "--metrics-scrape-timeout-ms", description = "Timeout of one /metrics scrape (default 500).")
    long metricsScrapeTimeoutMs = 500;

    @Option(names = "--metrics-staleness-ms", description = "A /metrics reading older than this counts as saturated (default 1000).")
    long metricsStalenessMs = 1000;

    @Option(names = "--metrics-waiting-name", description = "Queued-requests gauge read from /metrics instead of the "
            + "engine's (vllm:num_requests_waiting, sglang:num_queue_reqs, trtllm_num_requests_waiting), for forks.")
    String metricsWaitingName;

    @Option(names = "--metrics-running-name", description = "Running-requests gauge read from /metrics instead of the "
            + "engine's (vllm:num_requests_running, sglang:num_running_reqs, trtllm_num_requests_running), for forks.")
    String metricsRunningName;

    @Option(names = "--metrics-kv-usage-name", description = "KV-usage gauge (fraction 0..1) read from /metrics instead of "
            + "the engine's (vllm:kv_cache_usage_perc, sglang:token_usage, trtllm_kv_cache_utilization), for forks.")
    String metricsKvUsageName;

    @Option(names = "--lora-affinity-weight", description = "What a LoRA adapter's residency on a worker is worth, in "
            + "queued requests, when a request for it has no prefix holder: the worker with the least load + weight * "
            + "(1 - affinity) wins (affinity 1 running, 0.8 free slot, 0.6 waiting, 0 otherwise); 0 = adapter-blind (default 8).")
    double loraAffinityWeight = LoraConfig.DEFAULTS.affinityWeight();

    @Option(names = "--lora-dynamic-loading", arity = "0..1", fallbackValue = "true", description = "When no candidate "
            + "lists a requested adapter of the --lora-adapter catalogue, load it onto the chosen worker "
            + "(vLLM POST /v1/load_lora_adapter, SGLang /load_lora_adapter) before forwarding (default false).")
    boolean loraDynamicLoading = LoraConfig.DEFAULTS.dynamicLoading();

    @Option(names = "--lora-adapter", split = ",", description = "The adapter catalogue for dynamic loading: NAME=PATH "
            + "(the engine's lora_path), comma separated (default none).")
    List<String> loraAdapters = new ArrayList<>();

    @Option(names = "--lora-load-timeout-ms", description = "How long one adapter load request may take (default 30000).")
    long loraLoadTimeoutMs = LoraConfig.DEFAULTS.loadTimeoutMs();

    /**
     * Parses flags (and the config file they name) into a validated config.
     *
     * @throws ConfigException naming the flag and value on any invalid input
     */
    public static RouterConfig parse(String... args) {
        // A flag given on the command line replaces the file's value whole; without this, list flags
        // (picocli appends) would add to the file's list instead of overriding it.
        Set<String> given = new HashSet<>();
        for (String arg : args) {
            if (arg.startsWith("--")) {
                given.add(arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg);
            }
        }
        List<String> all = new ArrayList<>();
        for (String fileArg : configFileArgs(args)) {
            if (!given.contains(fileArg.substring(0, fileArg.indexOf('=')))) {
                all.add(fileArg);
            }
        }
        all.addAll(List.of(args));
        RouterOptions options = new RouterOptions();
        CommandLine cli = newCommandLine(options);
        try {
            cli.parseArgs(all.toArray(String[]::new));
        } catch (CommandLine.ParameterException e) {
            throw new ConfigException(e.getMessage(), e);
        }
        return options.toConfig();
    }

    /**
     * Prints the usage (or version) and returns true when {@code args} ask for {@code --help} /
     * {@code -h} ({@code --version} / {@code -V}): the caller then exits 0 without starting anything.
     * False otherwise, also for flags that do not parse (the normal start reports them).
     */
    public static boolean printHelpIfRequested(java.io.PrintWriter out, String... args) {
        return printHelpIfRequested(newCommandLine(new RouterOptions()), out, args);
    }

    /** {@link #printHelpIfRequested(java.io.PrintWriter, String...)} for any picocli command (the mock worker's too). */
    public static boolean printHelpIfRequested(CommandLine cli, java.io.PrintWriter out, String... args) {
        try {
            cli.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            return false;
        }
        if (cli.isUsageHelpRequested()) {
            cli.usage(out);
        } else if (cli.isVersionHelpRequested()) {
            cli.printVersionHelp(out);
        } else {
            return false;
        }
        out.flush();
        return true;
    }

    /** A picocli CommandLine over {@code options} that lets later values override earlier ones. */
    public static CommandLine newCommandLine(Object options) {
        CommandLine cli = new CommandLine(options);
        cli.setOverwrittenOptionsAllowed(true);
        return cli;
    }

    RouterConfig toConfig() {
        if (adminApiKey == null) {
            adminApiKey = emptyToNull(System.getenv("KVROUTE_ADMIN_API_KEY"));
        }
        if (apiKey == null) {
            apiKey = emptyToNull(System.getenv("KVROUTE_API_KEY"));
        }
        return RouterConfig.builder()
                .host(host)
                .port(port)
                .workerUrls(workerUrls)
                .policy(policy)
                .minLoadChoices(minLoadChoices)
                .maxBodyBytes(maxBodyBytes)
                .requestTimeoutSecs(requestTimeoutSecs)
                .connectTimeoutSecs(connectTimeoutSecs)
                .streamIdleTimeoutSecs(streamIdleTimeoutSecs)
                .healthCheckIntervalSecs(healthCheckIntervalSecs)
                .healthCheckTimeoutSecs(healthCheckTimeoutSecs)
                .healthFailureThreshold(healthFailureThreshold)
                .healthSuccessThreshold(healthSuccessThreshold)
                .retryMaxAttempts(retryMaxAttempts)
                .retryInitialBackoffMs(retryInitialBackoffMs)
                .retryMaxBackoffMs(retryMaxBackoffMs)
                .retryBackoffMultiplier(retryBackoffMultiplier)
                .retryJitter(retryJitter)
                .cbFailureThreshold(cbFailureThreshold)
                .cbSuccessThreshold(cbSuccessThreshold)
                .cbTimeoutSecs(cbTimeoutSecs)
                .disableCircuitBreaker(disableCircuitBreaker)
                .shutdownDrainSecs(shutdownDrainSecs)
                .adminApiKey(adminApiKey)
                .apiKey(apiKey)
                .modelIds(modelIds)
                .tokenizerPaths(tokenizerPaths)
                .prefillUrls(prefillUrls)
                .decodeUrls(decodeUrls)
                .prefillPolicy(prefillPolicy)
                .decodePolicy(decodePolicy)
                .pdBusyRetryTimeoutSecs(pdBusyRetryTimeoutSecs)
                .loadFreshnessSecs(loadFreshnessSecs)
                .disableInputIdsForwarding(disableInputIdsForwarding)
                .cacheAffinityMinMatchedTokens(cacheAffinityMinMatchedTokens)
                .cacheAffinityMinMatchRatio(cacheAffinityMinMatchRatio)
                .cacheCandidateMaxWorkers(cacheCandidateMaxWorkers)
                .cacheCandidateMinWorkers(cacheCandidateMinWorkers)
                .cacheCandidateRatio(cacheCandidateRatio)
                .cacheSwitchMarginTokens(cacheSwitchMarginTokens)
                .pressureAbsThresholdTokens(pressureAbsThresholdTokens)
                .pressureRelThreshold(pressureRelThreshold)
                .pressureAbsThresholdMs(pressureAbsThresholdMs)
                .disablePressureGuard(disablePressureGuard)
                .workerQueueLimit(workerQueueLimit)
                .saturationQueueFloor(saturationQueueFloor)
                .cacheKeyMode(cacheKeyMode)
                .cacheIndex(cacheIndex)
                .kvEventsSilenceSecs(kvEventsSilenceSecs)
                .kvEventsMaxBlocksPerRank(kvEventsMaxBlocksPerRank)
                .kvEventsHash(kvEventsHash)
                .cacheSampleStride(cacheSampleStride)
                .cacheMaxTreeSize(cacheMaxTreeSize)
                .sessionIdHeader(sessionIdHeader)
                .sessionIdleSecs(sessionIdleSecs)
                .stickyFallbackPolicy(stickyFallbackPolicy)
                .tokenizerCacheBytes(tokenizerCacheBytes)
                .serviceDiscovery(serviceDiscovery)
                .selector(selector)
                .prefillSelector(prefillSelector)
                .decodeSelector(decodeSelector)
                .serviceDiscoveryNamespace(serviceDiscoveryNamespace)
                .serviceDiscoveryPort(serviceDiscoveryPort)
                .bootstrapPortAnnotation(bootstrapPortAnnotation)
                .metricsPort(metricsPort)
                .cacheMaxIndexBytes(cacheMaxIndexBytes)
                .accessLog(emptyToNull(accessLog))
                .otlpTracesEndpoint(emptyToNull(otlpTracesEndpoint))
                .traceSamplingRatio(traceSamplingRatio)
                .maxN(maxN)
                .loadSource(loadSource)
                .engineType(engineType)
                .metricsScrapeIntervalMs(metricsScrapeIntervalMs)
                .metricsScrapeTimeoutMs(metricsScrapeTimeoutMs)
                .metricsStalenessMs(metricsStalenessMs)
                .metricsWaitingName(emptyToNull(metricsWaitingName))
                .metricsRunningName(emptyToNull(metricsRunningName))
                .metricsKvUsageName(emptyToNull(metricsKvUsageName))
                .lora(new LoraConfig(loraAffinityWeight, loraDynamicLoading, LoraConfig.parseCatalogue(loraAdapters),
                        loraLoadTimeoutMs))
                .build();
    }

    private static String emptyToNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    /** Finds {@code --config} in args and turns the YAML file into leading flag arguments. */
    static List<String> configFileArgs(String[] args) {
        Path file = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                file = Path.of(args[i + 1]);
            } else if (args[i].startsWith("--config=")) {
                file = Path.of(args[i].substring("--config=".length()));
            }
        }
        return file == null ? List.of() : yamlToArgs(file);
    }

    /** Converts a flat YAML map of flag names to values into {@code --flag value} arguments. */
    public static List<String> yamlToArgs(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new ConfigException("--config cannot read '" + file + "': " + e.getMessage(), e);
        }
        List<String> out = new ArrayList<>();
        if (root == null || root.isNull() || root.isMissingNode()) {
            return out;
        }
        if (!root.isObject()) {
            throw new ConfigException("--config '" + file + "' must be a YAML mapping of flag names to values");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String flag = "--" + field.getKey();
            JsonNode value = field.getValue();
            if (flag.equals("--config") || value.isNull()) {
                continue; // YAML null (`key:` or `key: null`) means absent: the default applies
            }
            if (value.isBoolean()) {
                out.add(flag + "=" + value.asBoolean());
            } else if (value.isArray()) {
                List<String> parts = new ArrayList<>();
                value.forEach(v -> parts.add(v.asText()));
                out.add(flag + "=" + String.join(",", parts));
            } else if (value.isValueNode()) {
                out.add(flag + "=" + value.asText());
            } else {
                throw new ConfigException("--config key '" + field.getKey() + "' must be a scalar or a list");
            }
        }
        return out;
    }
}
