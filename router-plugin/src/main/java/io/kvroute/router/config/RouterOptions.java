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

    @Option(names = "--max-n", description = "Largest n (sequences per request) a client may ask for; more is a 400 invalid_request_error naming n"
            + " (default 128, OpenAI's limit). Checked on every endpoint, top level and sampling_params.n.")
    int maxN = RouterConfig.DEFAULT_MAX_N;

    /** Settings declared on records ({@link Setting}); their options are added by {@link #newCommandLine}. */
    private final SettingsBinder<HealthSettings> health = SettingsBinder.of(HealthSettings.class);
    private final SettingsBinder<RetrySettings> retry = SettingsBinder.of(RetrySettings.class);
    private final SettingsBinder<BreakerSettings> breaker = SettingsBinder.of(BreakerSettings.class);
    private final SettingsBinder<SessionSettings> session = SettingsBinder.of(SessionSettings.class);
    private final SettingsBinder<KvEventsSettings> kvEvents = SettingsBinder.of(KvEventsSettings.class);
    private final SettingsBinder<CacheAwareSettings> cacheAware = SettingsBinder.of(CacheAwareSettings.class);
    private final SettingsBinder<LoadSourceConfig> loadSource = SettingsBinder.of(LoadSourceConfig.class);
    private final SettingsBinder<TokenizationSettings> tokenization = SettingsBinder.of(TokenizationSettings.class);
    private final SettingsBinder<PdSettings> pd = SettingsBinder.of(PdSettings.class);
    private final SettingsBinder<TenantsConfig> tenants = SettingsBinder.of(TenantsConfig.class);
    private final SettingsBinder<LoraConfig> lora = SettingsBinder.of(LoraConfig.class);
    private final SettingsBinder<TimeoutSettings> timeouts = SettingsBinder.of(TimeoutSettings.class);
    private final SettingsBinder<ObservabilityConfig> observability = SettingsBinder.of(ObservabilityConfig.class);

    @Option(names = "--admin-api-key", description = "Bearer token for the admin API; env KVROUTE_ADMIN_API_KEY. Unset = admin API disabled.")
    String adminApiKey = null;

    @Option(names = "--api-key", description = "Bearer token required on every path but /healthz and /readyz (inference, /v1/models, /v1/loads, /metrics); env KVROUTE_API_KEY. Unset = open.")
    String apiKey = null;

    @Option(names = "--model-ids", split = ",", description = "Served model ids; learned from workers' /server_info when empty.")
    List<String> modelIds = new ArrayList<>();

    @Option(names = "--service-discovery", arity = "0..1", fallbackValue = "true", description = "Discover workers from Kubernetes pods (excludes --worker-urls, --prefill-urls, --decode-urls).")
    boolean serviceDiscovery;

    @Option(names = "--selector", arity = "1..*", split = ",", description = "Service discovery: labels k=v (all must match) of regular worker pods; space or comma separated.")
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

    @Option(names = "--metrics-port", description = "Serve /metrics on this port (same --host, no API key) instead of the main port; 0 picks a free one (default unset: /metrics on the main port, behind --api-key when set).")
    Integer metricsPort;

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
        if (options instanceof RouterOptions router) {
            for (SettingsBinder<?> binder : List.of(router.health, router.retry, router.breaker, router.session, router.kvEvents,
                    router.timeouts, router.observability, router.cacheAware,
                    router.loadSource, router.tokenization, router.pd, router.tenants, router.lora)) {
                binder.options().forEach(cli.getCommandSpec()::addOption);
            }
        }
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
                .health(health.build())
                .retry(retry.build())
                .breaker(breaker.build())
                .session(session.build())
                .kvEvents(kvEvents.build())
                .cacheAware(cacheAware.build())
                .loadSource(loadSource.build())
                .tokenization(tokenization.build())
                .pd(pd.build())
                .tenants(tenants.build())
                .lora(lora.build())
                .timeouts(timeouts.build())
                .observability(observability.build())
                .adminApiKey(adminApiKey)
                .apiKey(apiKey)
                .modelIds(modelIds)
                .serviceDiscovery(serviceDiscovery)
                .selector(selector)
                .prefillSelector(prefillSelector)
                .decodeSelector(decodeSelector)
                .serviceDiscoveryNamespace(serviceDiscoveryNamespace)
                .serviceDiscoveryPort(serviceDiscoveryPort)
                .bootstrapPortAnnotation(bootstrapPortAnnotation)
                .metricsPort(metricsPort)
                .maxN(maxN)
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
